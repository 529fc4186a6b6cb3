import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { importSessions } from '../../src-main/data/import.js';
import { readLines } from '../../src-main/data/lines.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Message } from '../../src-shared/sessions.js';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import {
  answer,
  desktopDataDir,
  EMAIL,
  exportText,
  id,
  prompt,
  putLocal,
  type LocalSession,
} from '../helpers/desktop-sessions.js';
import { seedWorkspace, startTestServer, withKey, type TestServer } from '../helpers/server.js';

const sandbox = useSandbox();
const teams: TestServer[] = [];
afterEach(async () => {
  for (const team of teams.splice(0)) await team.dispose();
});

const desktop = (sessions: LocalSession[]) => desktopDataDir(sandbox.dataDir(), sessions);

/** The team server, its workspace, a full key to look with and a push-only key. */
async function team() {
  const server = await startTestServer();
  teams.push(server);
  const owner = await seedWorkspace(server, 'team');
  const pushKey = await server.accounts.createKey({ organizationId: owner.organizationId, pushOnly: true });
  return { server, owner, pushKey: pushKey.key };
}

async function teamSession(server: TestServer, apiKey: string, sessionId: string) {
  const response = await withKey(server, apiKey, 'GET', `/api/sessions/${sessionId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { session: Record<string, unknown> & { messages: Message[] } }).session;
}

async function teamSessionIds(server: TestServer, apiKey: string): Promise<string[]> {
  const response = await withKey(server, apiKey, 'GET', '/api/sessions');
  const body = (await response.json()) as { sessions: { id: string }[] };
  return body.sessions.map((s) => s.id).sort();
}

const push = (dataDir: string, url: string, key: string, ...more: string[]) =>
  runCli(['push', '--to', url, '--key', key, '--data-dir', dataDir, ...more]);

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('sessiondesk push', () => {
  it('brings each session once with all its messages, then only what a session gained', async () => {
    const first: LocalSession = { id: id(1), messages: [prompt('Fix the build'), answer('Done: 2 files.')] };
    const second: LocalSession = {
      id: id(2),
      messages: [prompt('Add a test'), answer('Added.'), prompt('Thanks'), answer('Welcome.')],
    };
    const local = await desktop([first, second]);
    const { server, owner, pushKey } = await team();

    const pushed = await push(local.dataDir, server.url, pushKey);
    expect(pushed.stderr).toBe('');
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toContain('pushed 2 sessions (6 new messages)');
    for (const session of [first, second]) {
      const held = await teamSession(server, owner.apiKey, session.id);
      expect(held.messages).toEqual(session.messages);
      expect(held.status).toBe('completed');
      expect(held.pushedFrom).toEqual({
        machine: hostname(),
        author: { name: 'Ada Desk', email: EMAIL },
        pushedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/u),
      });
      // A push-only key made by the administrator: the desktop's author has no account here.
      expect((held.author as { id: string }).id).toBe(owner.user.userId);
    }

    const again = await push(local.dataDir, server.url, pushKey);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('pushed 0 sessions (0 new messages)');
    expect(again.stdout).toContain('2 already there');

    const grown = { ...second, messages: [...second.messages, prompt('One more'), answer('Sure.')] };
    await putLocal(local.dataDir, local.organizationId, [grown]);
    const third = await push(local.dataDir, server.url, pushKey);
    expect(third.stdout).toContain('pushed 1 session (2 new messages)');
    expect((await teamSession(server, owner.apiKey, second.id)).messages).toEqual(grown.messages);
    expect(await teamSessionIds(server, owner.apiKey)).toEqual([first.id, second.id]);
  });

  it('gives a push-only key nothing but the push routes', async () => {
    const { server, owner, pushKey } = await team();
    const list = await withKey(server, pushKey, 'GET', '/api/sessions');
    expect(list.status).toBe(403);
    expect(((await list.json()) as { error: { message: string } }).error.message).toMatch(
      /may only push a desktop's sessions/u,
    );
    expect((await withKey(server, pushKey, 'GET', `/api/push/sessions/${id(9)}`)).status).toBe(404);
    // A full key pushes too; a signed-in browser does not.
    expect((await withKey(server, owner.apiKey, 'GET', `/api/push/sessions/${id(9)}`)).status).toBe(404);
    const byCookie = await fetch(`${server.url}/api/push/sessions/${id(9)}`, {
      headers: { cookie: owner.user.cookie },
    });
    expect(byCookie.status).toBe(401);
  });

  it('refuses an id of another workspace, and a session the team server ran, changing neither', async () => {
    const mine: LocalSession = { id: id(3), messages: [prompt('Mine'), answer('Yes')] };
    const theirs: LocalSession = { id: id(4), messages: [prompt('Clash'), answer('Here')] };
    const ranThere: LocalSession = { id: id(5), messages: [prompt('Also clash')] };
    const local = await desktop([mine, theirs, ranThere]);
    const { server, owner, pushKey } = await team();
    const other = await seedWorkspace(server, 'other');
    // The other workspace received a session of that id first; the team's own session has the
    // other id, made on the server (by import: it has no origin, as a session run there).
    const otherKey = await server.accounts.createKey({
      organizationId: other.organizationId,
      pushOnly: true,
    });
    const otherDesk = await desktop([{ id: theirs.id, messages: [prompt('Someone else')] }]);
    expect((await push(otherDesk.dataDir, server.url, otherKey.key)).code).toBe(0);
    await importSessions(
      readLines(
        Readable.from([exportText(owner.organizationId, [{ id: ranThere.id, messages: [answer('x')] }])]),
      ),
      owner.organizationId,
      { storage: storageOf(server.store) },
    );

    const pushed = await push(local.dataDir, server.url, pushKey);
    expect(pushed.code).toBe(1);
    expect(pushed.stdout).toContain('pushed 1 session');
    expect(pushed.stdout).toContain(`${theirs.id}: Session ${theirs.id} belongs to another workspace`);
    expect(pushed.stdout).toContain(`${ranThere.id}: Session ${ranThere.id} was not pushed to this server`);
    expect((await teamSession(server, other.apiKey, theirs.id)).messages).toEqual([prompt('Someone else')]);
    const kept = await teamSession(server, owner.apiKey, ranThere.id);
    expect(kept.messages).toEqual([answer('x')]);
    expect(kept.pushedFrom).toBeUndefined();
  });

  it('refuses a session its desktop dated in the future, and pushes the others', async () => {
    const now: LocalSession = { id: id(6), messages: [prompt('Today'), answer('Yes')] };
    const later: LocalSession = { id: id(7), messages: [prompt('Tomorrow')], at: '2099-01-01T00:00:00.000Z' };
    const local = await desktop([now, later]);
    const { server, owner, pushKey } = await team();
    const pushed = await push(local.dataDir, server.url, pushKey);
    expect(pushed.code).toBe(1);
    expect(pushed.stdout).toContain('pushed 1 session');
    expect(pushed.stdout).toMatch(new RegExp(`${later.id}: session\\.createdAt is in the future`, 'u'));
    expect(await teamSessionIds(server, owner.apiKey)).toEqual([now.id]);
  });

  it('resumes a push killed mid-way: each session once and complete', async () => {
    const big: LocalSession = {
      id: id(6),
      messages: [
        prompt('Read every file'),
        ...Array.from({ length: 40 }, (_, i) => answer(`file ${i}\n`.padEnd(400 * 1024, 'x'))),
      ],
    };
    const small: LocalSession = { id: id(7), messages: [prompt('Small'), answer('ok')] };
    const local = await desktop([small, big]);
    const { server, owner, pushKey } = await team();

    const child = spawn(
      process.execPath,
      [CLI, 'push', '--to', server.url, '--key', pushKey, '--data-dir', local.dataDir],
      { cwd: ROOT, stdio: 'ignore' },
    );
    const exited = once(child, 'exit');
    await until(async () => {
      const row = server.repos.sessions.find(big.id);
      return row !== null && row.messageCount > 1;
    }, 'the big session is on its way');
    child.kill('SIGKILL');
    await exited;
    const cut = server.repos.sessions.find(big.id)?.messageCount ?? 0;
    expect(cut).toBeLessThan(big.messages.length);

    const rerun = await push(local.dataDir, server.url, pushKey);
    expect(rerun.stderr).toBe('');
    expect(rerun.code).toBe(0);
    expect(await teamSessionIds(server, owner.apiKey)).toEqual([big.id, small.id]);
    const held = await teamSession(server, owner.apiKey, big.id);
    expect(held.messages.length).toBe(big.messages.length);
    expect(held.messages).toEqual(big.messages);
    expect((await teamSession(server, owner.apiKey, small.id)).messages).toEqual(small.messages);
  });

  it('with --watch, through the desktop running server, sends what appears, and stops on SIGTERM', async () => {
    const first: LocalSession = { id: id(8), messages: [prompt('Watch me'), answer('Watching')] };
    const local = await desktop([first]);
    const { server, owner, pushKey } = await team();
    await sandbox.serve(local.dataDir);

    let stdout = '';
    let stderr = '';
    const child = spawn(
      process.execPath,
      [CLI, 'push', '--watch', '--to', server.url, '--key', pushKey, '--data-dir', local.dataDir],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    sandbox.defer(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit');
    await until(async () => server.repos.sessions.find(first.id)?.messageCount === 2, 'the session is there');

    // Grown on the desktop through its running server (an import completes a session).
    const grown = { ...first, messages: [...first.messages, prompt('And now?')] };
    const imported = await runCli(
      ['import', '--workspace', local.organizationId, '--data-dir', local.dataDir],
      {},
      exportText(local.organizationId, [grown]),
    );
    expect(imported.stdout).toContain('imported 1 session (1 message)');
    await until(
      async () => server.repos.sessions.find(first.id)?.messageCount === 3,
      `the new message is there (push said: ${stdout}${stderr})`,
    );
    expect((await teamSession(server, owner.apiKey, first.id)).messages).toEqual(grown.messages);

    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(stdout).toContain('stopped watching');
  });

  it('says what is wrong: no data directory, an unreachable server, a wrong key, no such workspace', async () => {
    const local = await desktop([]);
    const { server, pushKey } = await team();
    const unknown = await push(local.dataDir, server.url, pushKey, '--workspace', 'Nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      `has no workspace "Nope"; its workspaces: ${local.organizationId} ("Desk").`,
    );

    const missing = await push(join(local.dataDir, 'nowhere'), server.url, 'sdk_x');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/There is no data directory at .*nowhere/u);

    const closed = await startTestServer();
    const closedUrl = closed.url;
    await closed.dispose();
    const unreachable = await push(local.dataDir, closedUrl, 'sdk_x');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      `Cannot push to the team server at ${closedUrl}: nothing listens at`,
    );

    const wrongKey = await push(local.dataDir, server.url, 'sdk_not-a-key');
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('refused the key (Invalid API key). Check --key.');
  });
});
