// Settings' history sources over HTTP: members list them, owners add, pause and remove them,
// and the server follows an added source.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HistorySourceResponseSchema, HistorySourcesResponseSchema } from '../../src-shared/history.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { ROOT } from '../helpers/cli.js';
import {
  asUser,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  uniqueEmail,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)],
  );
}

describe('history sources', () => {
  it('suggests `history import` where it works: on a desktop, never on a team server, which refuses it', async () => {
    const server = await startTestServer();
    servers.push(server);
    const { user, organizationId } = await seedWorkspace(server);
    const listed = await asUser(
      server,
      user.cookie,
      'GET',
      `/api/workspaces/${organizationId}/history-sources`,
    );
    expect(listed.status).toBe(200);
    const { importCommand } = HistorySourcesResponseSchema.parse(await listed.json());
    if (server.backend === 'postgres') expect(importCommand).toBeUndefined();
    else
      expect(importCommand).toBe(
        `sessiondesk history import --workspace ${organizationId} --data-dir ${server.dataDir}`,
      );
  });

  it('owners add, pause and remove; members only list; removing keeps the files and sessions', async () => {
    const server = await startTestServer();
    servers.push(server);
    const { user, organizationId, apiKey } = await seedWorkspace(server);
    const root = mkdtempSync(join(tmpdir(), 'history-root-'));
    dirs.push(root);
    cpSync(join(ROOT, 'test', 'fixtures', 'history', 'codex', '0.169.0', 'plain-answer'), root, {
      recursive: true,
    });
    const base = `/api/workspaces/${organizationId}/history-sources`;

    const relative = await asUser(server, user.cookie, 'POST', base, {
      kind: 'codex',
      rootDir: 'codex-home',
    });
    expect(relative.status).toBe(400);
    const missing = await asUser(server, user.cookie, 'POST', base, {
      kind: 'codex',
      rootDir: join(root, 'nope'),
    });
    expect(missing.status).toBe(400);

    const added = await asUser(server, user.cookie, 'POST', base, { kind: 'codex', rootDir: root });
    expect(added.status).toBe(201);
    const { source } = HistorySourceResponseSchema.parse(await added.json());
    expect(source).toMatchObject({
      kind: 'codex',
      rootDir: root,
      paused: false,
      author: { email: user.email },
    });

    // The server follows it: its session is in the API, and in the source's counts, within 5 s.
    const started = Date.now();
    let listed = HistorySourcesResponseSchema.parse(
      await (await asUser(server, user.cookie, 'GET', base)).json(),
    );
    while (listed.sources[0]?.sessions !== 1) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = HistorySourcesResponseSchema.parse(
        await (await asUser(server, user.cookie, 'GET', base)).json(),
      );
    }
    expect(listed.sources).toMatchObject([{ id: source.id, sessions: 1, messages: expect.any(Number) }]);
    expect(listed.sources[0]!.messages).toBeGreaterThan(0);
    expect(listed.sources[0]!.lastImportAt).toBeDefined();
    const sessions = ListSessionsResponseSchema.parse(
      await (await withKey(server, apiKey, 'GET', `/api/sessions?organizationId=${organizationId}`)).json(),
    );
    expect(sessions.sessions.filter((s) => s.source?.kind === 'codex')).toHaveLength(1);

    // A member sees the sources but cannot change them; an API key is not enough.
    const email = uniqueEmail('member');
    await server.accounts.createUser({ email, name: 'Member', password: PASSWORD });
    await server.accounts.addMember({ organizationId, email });
    const member = await signIn(server, email);
    expect((await asUser(server, member, 'GET', base)).status).toBe(200);
    expect((await asUser(server, member, 'PATCH', `${base}/${source.id}`, { paused: true })).status).toBe(
      403,
    );
    expect((await asUser(server, member, 'DELETE', `${base}/${source.id}`)).status).toBe(403);
    expect((await withKey(server, apiKey, 'GET', base)).status).toBe(400);

    const paused = await asUser(server, user.cookie, 'PATCH', `${base}/${source.id}`, { paused: true });
    expect(HistorySourceResponseSchema.parse(await paused.json()).source.paused).toBe(true);

    const before = files(root);
    expect((await asUser(server, user.cookie, 'DELETE', `${base}/${source.id}`)).status).toBe(204);
    expect((await asUser(server, user.cookie, 'DELETE', `${base}/${source.id}`)).status).toBe(404);
    expect(
      HistorySourcesResponseSchema.parse(await (await asUser(server, user.cookie, 'GET', base)).json())
        .sources,
    ).toEqual([]);
    expect(files(root)).toEqual(before);
    expect(before.every((f) => existsSync(f))).toBe(true);
    const after = ListSessionsResponseSchema.parse(
      await (await withKey(server, apiKey, 'GET', `/api/sessions?organizationId=${organizationId}`)).json(),
    );
    expect(after.sessions.filter((s) => s.source)).toHaveLength(1);
  });

  it("offers owners the CLIs' folders found in their default places, until added", async () => {
    // The agents' home holds Claude Code's and Codex's folders with sessions; Gemini CLI's
    // folder exists but holds none; CODEX_HOME moves Codex's folder, as the CLI itself does.
    const home = mkdtempSync(join(tmpdir(), 'history-home-'));
    dirs.push(home);
    const fixtures = join(ROOT, 'test', 'fixtures', 'history');
    cpSync(join(fixtures, 'claude-code', '2.1.330', 'resume'), join(home, '.claude'), { recursive: true });
    cpSync(join(fixtures, 'codex', '0.169.0', 'plain-answer'), join(home, 'codex-home'), {
      recursive: true,
    });
    cpSync(join(fixtures, 'codex', '0.169.0', 'plain-answer'), join(home, '.codex'), { recursive: true });
    mkdirSync(join(home, '.gemini'));
    const server = await startTestServer({
      agentEnv: { PATH: process.env.PATH, HOME: home, CODEX_HOME: join(home, 'codex-home') },
    });
    servers.push(server);
    const { user, organizationId } = await seedWorkspace(server);
    const base = `/api/workspaces/${organizationId}/history-sources`;
    const list = async (cookie: string) =>
      HistorySourcesResponseSchema.parse(await (await asUser(server, cookie, 'GET', base)).json());

    expect((await list(user.cookie)).found).toEqual([
      { kind: 'claude-code', rootDir: join(home, '.claude') },
      { kind: 'codex', rootDir: join(home, 'codex-home') },
    ]);

    const email = uniqueEmail('member');
    await server.accounts.createUser({ email, name: 'Member', password: PASSWORD });
    await server.accounts.addMember({ organizationId, email });
    expect((await list(await signIn(server, email))).found).toEqual([]);

    const added = await asUser(server, user.cookie, 'POST', base, {
      kind: 'claude-code',
      rootDir: join(home, '.claude'),
    });
    expect(added.status).toBe(201);
    const after = await list(user.cookie);
    expect(after.found).toEqual([{ kind: 'codex', rootDir: join(home, 'codex-home') }]);
    expect(after.sources.map((s) => s.rootDir)).toEqual([join(home, '.claude')]);
  });
});
