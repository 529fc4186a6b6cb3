import { afterEach, describe, expect, it } from 'vitest';
import { ErrorResponseSchema, SessionResponseSchema } from '../../src-shared/index.js';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
});

describe('persistence over HTTP', () => {
  it('a restarted server answers with exactly what it acknowledged', async () => {
    const first = await startTestServer();
    const owner = await seedWorkspace(first);
    const a = await createSession(first, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Persist me ✓',
      repoUrl: 'https://example.com/acme/api',
    });
    await withKey(first, owner.apiKey, 'PATCH', `/api/sessions/${a.id}`, {
      title: 'Renamed',
      status: 'failed',
    });
    const before = await (await withKey(first, owner.apiKey, 'GET', `/api/sessions/${a.id}`)).text();
    const list = await (await withKey(first, owner.apiKey, 'GET', '/api/sessions')).json();
    await first.stop();

    const second = await startTestServer({ dataDir: first.dataDir });
    servers.push(second);
    expect(await (await withKey(second, owner.apiKey, 'GET', `/api/sessions/${a.id}`)).text()).toBe(before);
    expect(await (await withKey(second, owner.apiKey, 'GET', '/api/sessions')).json()).toEqual(list);
  });
});

describe(
  'disk faults',
  sqljsOnly(
    "the faults are injected into the sql.js store's file layer; a team server's disk is PostgreSQL's",
  ),
  () => {
    it('a failing disk fails writes with 503 and a request id, keeps reads going, and heals', async () => {
      let failing: string | null = null;
      const faulty: FileLayer = {
        ...realFiles,
        async write(handle, data, position) {
          if (failing) throw Object.assign(new Error(`${failing}: injected`), { code: failing });
          return realFiles.write(handle, data, position);
        },
      };
      const server = await startTestServer({ store: { files: faulty } });
      servers.push(server);
      const owner = await seedWorkspace(server);
      const session = await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Keep me',
      });

      let title = 'Keep me';
      for (const code of ['ENOSPC', 'EIO']) {
        failing = code;
        const patch = await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${session.id}`, {
          title: `lost to ${code}`,
        });
        expect(patch.status).toBe(503);
        const error = ErrorResponseSchema.parse(await patch.json());
        expect(error.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
        expect(error.error.message).not.toContain(code);
        expect(error.error.message).not.toMatch(/at \w+ \(/);
        // Reads go on, and do not show the write that failed.
        await expect
          .poll(
            async () =>
              (await (
                await withKey(server, owner.apiKey, 'GET', `/api/sessions/${session.id}`)
              ).json()) as unknown,
          )
          .toMatchObject({ session: { title } });
        failing = null;
        await expect
          .poll(
            async () =>
              (
                await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${session.id}`, {
                  title: `after ${code}`,
                })
              ).status,
          )
          .toBe(200);
        title = `after ${code}`;
      }
      const final = SessionResponseSchema.parse(
        await (await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${session.id}`, {})).json(),
      );
      expect(final.session.title).toBe('after EIO');
      await server.stop();
      const reopened = await startTestServer({ dataDir: server.dataDir });
      servers.push(reopened);
      const after = await (
        await withKey(reopened, owner.apiKey, 'GET', `/api/sessions/${session.id}`)
      ).json();
      expect(after).toMatchObject({ session: { title: 'after EIO' } });
    });
  },
);
