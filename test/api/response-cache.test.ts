import { afterEach, describe, expect, it } from 'vitest';
import { FullSessionResponseSchema, ListSessionsResponseSchema } from '../../src-shared/index.js';
import { newId } from '../../src-main/accounts/secrets.js';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  steppableClock,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';
import type { Repos } from '../../src-main/store/storage.js';

// GET one session answers from a cache of encoded responses. These tests read a session,
// change it in every way there is, and read it again: a stale answer would fail them.

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
});

async function readSession(server: TestServer, key: string, id: string) {
  const response = await withKey(server, key, 'GET', `/api/sessions/${id}`);
  expect(response.status).toBe(200);
  return FullSessionResponseSchema.parse(await response.json()).session;
}

describe('reading a session again after it changed', () => {
  it('shows every kind of change at once, made over HTTP or by another writer in the process', async () => {
    const server = await startTestServer();
    servers.push(server);
    const owner = await seedWorkspace(server);
    // Made directly (no agent runs for it), so that nothing but this test changes it.
    // server.storage is a second set of repositories over the same database, as the CLI's would be.
    const id = newId('session');
    const at = new Date().toISOString();
    const write = (fn: (tx: Repos) => Promise<unknown>) => server.storage.write(fn);
    await write((tx) =>
      tx.sessions.insert({
        id,
        workspaceId: owner.organizationId,
        authorId: owner.user.userId,
        title: 'Cache me, then change me',
        model: 'claude-opus-4-6',
        createdAt: at,
        baseBranch: 'main',
        repoUrl: 'https://github.com/acme/cache',
        repository: 'acme/cache',
        initialMessage: 'Cache me, then change me',
      }),
    );
    const first = await readSession(server, owner.apiKey, id);
    expect(first.messages).toHaveLength(1);
    expect(await readSession(server, owner.apiKey, id)).toEqual(first);

    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${id}`, { title: 'Renamed' });
    expect((await readSession(server, owner.apiKey, id)).title).toBe('Renamed');
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${id}`, { status: 'completed' });
    expect((await readSession(server, owner.apiKey, id)).status).toBe('completed');

    await write((tx) =>
      tx.sessions.appendMessage(
        id,
        owner.organizationId,
        { type: 'assistant', message: { content: [{ type: 'text', text: 'Working on it' }] } },
        null,
        at,
      ),
    );
    expect((await readSession(server, owner.apiKey, id)).messages).toHaveLength(2);
    await write((tx) =>
      tx.sessions.replaceTasks(id, [{ id: 't1', title: 'Read the code', status: 'in_progress' }]),
    );
    expect((await readSession(server, owner.apiKey, id)).tasks).toEqual([
      { id: 't1', title: 'Read the code', status: 'in_progress' },
    ]);
    await write((tx) => tx.sessions.setBranch(id, 'agent/cache-me', at));
    expect((await readSession(server, owner.apiKey, id)).metadata.branch).toBe('agent/cache-me');
    await write((tx) =>
      tx.sessions.updatePullRequest(
        id,
        { number: 7, url: 'https://github.com/acme/cache/pull/7', status: 'open' },
        at,
      ),
    );
    const last = await readSession(server, owner.apiKey, id);
    expect(last.metadata).toMatchObject({ prNumber: 7, prUrl: 'https://github.com/acme/cache/pull/7' });

    // The same bytes as a server without any cache reads from the database.
    const cached = await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}`)).text();
    await server.stop();
    const uncached = await startTestServer({ dataDir: server.dataDir, cacheBytes: 0 });
    servers.push(uncached);
    expect(await (await withKey(uncached, owner.apiKey, 'GET', `/api/sessions/${id}`)).text()).toBe(cached);
  });

  it('keeps the access rules: 403 for another workspace, 404 for none, from the cache too', async () => {
    const server = await startTestServer();
    servers.push(server);
    const [owner, outsider] = await Promise.all([
      seedWorkspace(server, 'owner'),
      seedWorkspace(server, 'other'),
    ]);
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Mine',
    });
    await readSession(server, owner.apiKey, id);
    expect((await withKey(server, outsider.apiKey, 'GET', `/api/sessions/${id}`)).status).toBe(403);
    expect((await asUser(server, outsider.user.cookie, 'GET', `/api/sessions/${id}`)).status).toBe(403);
    expect((await asUser(server, owner.user.cookie, 'GET', `/api/sessions/${id}`)).status).toBe(200);
    expect(
      (
        await withKey(
          server,
          owner.apiKey,
          'GET',
          `/api/sessions/${id}?organizationId=${outsider.organizationId}`,
        )
      ).status,
    ).toBe(403);
    expect((await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id.slice(0, -1)}x`)).status).toBe(
      404,
    );
  });

  it(
    'never answers with a write the disk refused, though it was read while in flight',
    sqljsOnly("the write is held in the sql.js store's file layer"),
    async () => {
      let release: ((error: Error | null) => void) | null = null;
      let hold = false;
      const files: FileLayer = {
        ...realFiles,
        async write(handle, data, position) {
          if (hold) {
            const error = await new Promise<Error | null>((resolve) => {
              release = resolve;
            });
            if (error) throw error;
          }
          return realFiles.write(handle, data, position);
        },
      };
      const server = await startTestServer({ store: { files } });
      servers.push(server);
      const owner = await seedWorkspace(server);
      const { id } = await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Keep my title',
      });
      const before = await readSession(server, owner.apiKey, id);

      hold = true;
      const patch = withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${id}`, { title: 'Never saved' });
      // Memory holds the write while the journal is being written; a read now sees and caches it.
      await expect.poll(async () => (await readSession(server, owner.apiKey, id)).title).toBe('Never saved');
      await expect.poll(() => release !== null).toBe(true);
      hold = false;
      (release as unknown as (error: Error | null) => void)(
        Object.assign(new Error('EIO: injected'), { code: 'EIO' }),
      );
      expect((await patch).status).toBe(503);
      expect((await readSession(server, owner.apiKey, id)).title).toBe(before.title);
    },
  );
});

describe('reading a list again after sessions changed', () => {
  it('shows renames, new sessions and status changes at once, and stats that move with the clock', async () => {
    const clock = steppableClock('2026-03-02T10:00:00.000Z');
    const server = await startTestServer({ clock });
    servers.push(server);
    const owner = await seedWorkspace(server);
    const insert = (title: string) => {
      const id = newId('session');
      return server.storage
        .write((tx) =>
          tx.sessions.insert({
            id,
            workspaceId: owner.organizationId,
            authorId: owner.user.userId,
            title,
            model: 'claude-opus-4-6',
            createdAt: clock.now().toISOString(),
            baseBranch: 'main',
            initialMessage: title,
          }),
        )
        .then(() => id);
    };
    const list = async (query = '') => {
      const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions${query}`);
      expect(response.status).toBe(200);
      return ListSessionsResponseSchema.parse(await response.json());
    };
    const titles = (page: { sessions: { title: string }[] }) => page.sessions.map((s) => s.title);

    for (const title of ['one', 'two', 'three']) {
      await insert(title);
      clock.advance(1000);
    }
    const first = await list('?limit=2');
    expect(titles(first)).toEqual(['three', 'two']);
    expect(await list('?limit=2')).toEqual(first);
    expect(first.stats.authorsPastWeek).toBe(1);

    const two = first.sessions[1]!.id;
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${two}`, { title: 'two, renamed' });
    expect(titles(await list('?limit=2'))).toEqual(['three', 'two, renamed']);

    await insert('four');
    expect(titles(await list('?limit=2'))).toEqual(['four', 'three']);
    // The cursor handed out before still continues after where that page ended.
    expect(titles(await list(`?limit=2&cursor=${first.nextCursor!}`))).toEqual(['one']);

    expect(titles(await list('?status=completed'))).toEqual([]);
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${two}`, { status: 'completed' });
    expect(titles(await list('?status=completed'))).toEqual(['two, renamed']);

    // Eight days on, nothing was written: the page is the same, the week's stats are not.
    const before = await list('?limit=2');
    clock.advance(8 * 24 * 60 * 60 * 1000);
    const after = await list('?limit=2');
    expect(after.sessions).toEqual(before.sessions);
    expect(after.stats.authorsPastWeek).toBe(0);

    // The same bytes as a server without any cache.
    const urls = ['', '?limit=2', `?limit=2&cursor=${first.nextCursor!}`, '?status=completed', '?q=renamed'];
    const cached = await Promise.all(
      urls.map(async (url) => (await withKey(server, owner.apiKey, 'GET', `/api/sessions${url}`)).text()),
    );
    await server.stop();
    const uncached = await startTestServer({ dataDir: server.dataDir, clock, cacheBytes: 0 });
    servers.push(uncached);
    for (const [i, url] of urls.entries()) {
      expect(await (await withKey(uncached, owner.apiKey, 'GET', `/api/sessions${url}`)).text()).toBe(
        cached[i],
      );
    }
  });
});
