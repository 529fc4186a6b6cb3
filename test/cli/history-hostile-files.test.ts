// What a hostile program can plant in the folders `sessiondesk history import` and a running
// server's follower read: links to a private key elsewhere, and named pipes. Over the real
// recorded CLI folders, the real command as a process and the real server.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { HistoryKind } from '../../src-shared/sessions.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { CLI, ROOT, type ServeProcess } from '../helpers/cli.js';
import { cliIn, ok, seedOwner, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { finishedRoot, plantLinks, plantPipes, SECRET, secretOutside } from '../helpers/hostile-history.js';
import { until } from '../helpers/until.js';

const sandbox = useSandbox();

const FLAGS: Record<HistoryKind, string> = {
  'claude-code': '--claude-dir',
  codex: '--codex-dir',
  gemini: '--gemini-dir',
  'qwen-code': '--qwen-dir',
  opencode: '--opencode-dir',
};

/** `sessiondesk history import` as a process, killed if it has not ended within `ms`. */
function historyImport(
  dataDir: string,
  roots: Partial<Record<HistoryKind, string>>,
  org: string,
  ms = 60_000,
) {
  const args = ['history', 'import', '--workspace', org, '--data-dir', dataDir];
  for (const [kind, root] of Object.entries(roots)) args.push(FLAGS[kind as HistoryKind], root);
  return new Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>(
    (resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        env: { ...process.env, HOME: sandbox.dataDir(), CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, ms);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, timedOut });
      });
    },
  );
}

/** GET with the key; fails the test if the server does not answer within 5 s. */
async function getText(
  serve: ServeProcess,
  key: string,
  path: string,
): Promise<{ status: number; text: string }> {
  const started = Date.now();
  let response: Response;
  try {
    response = await fetch(`${serve.url}${path}`, {
      headers: { 'x-api-key': key },
      signal: AbortSignal.timeout(5_000),
    });
  } catch (err) {
    throw new Error(`GET ${path} had no answer after ${Date.now() - started} ms: ${String(err)}`, {
      cause: err,
    });
  }
  return { status: response.status, text: await response.text() };
}

/** The workspace's sessions as the list answers them (within 5 s, in its schema), and its text. */
async function sessionsOf(serve: ServeProcess, key: string, org: string) {
  const list = await getText(serve, key, `/api/sessions?organizationId=${org}`);
  expect(list.status).toBe(200);
  return { text: list.text, sessions: ListSessionsResponseSchema.parse(JSON.parse(list.text)).sessions };
}

/** Waits for a line in the server's log saying each path of each root was not read, and why. */
async function expectNotRead(
  serve: ServeProcess,
  roots: Partial<Record<HistoryKind, string>>,
  paths: Record<HistoryKind, string[]>,
  why: string,
) {
  const lines = (Object.keys(roots) as HistoryKind[]).flatMap((kind) =>
    paths[kind].map((path) => `History: ${roots[kind]}/${path} was not read: ${why}`),
  );
  for (const line of lines)
    expect(
      await until(
        () => serve.stderr(),
        (log) => log.includes(line),
      ),
    ).toContain(line);
  return lines;
}

/** Every session the API shows, in each of its forms, and search: the secret is in none. */
async function expectNoSecret(serve: ServeProcess, key: string, org: string): Promise<number> {
  const { text, sessions } = await sessionsOf(serve, key, org);
  expect(text).not.toContain(SECRET);
  for (const { id } of sessions) {
    for (const path of [
      `/api/sessions/${id}`,
      `/api/sessions/${id}/summary`,
      `/api/sessions/${id}/messages`,
    ]) {
      const answer = await getText(serve, key, path);
      expect(answer.status, path).toBe(200);
      expect(answer.text, path).not.toContain(SECRET);
    }
  }
  // Once the index holds the sessions (their prompts are found), the secret is not.
  const hits = async (q: string) =>
    (
      JSON.parse((await getText(serve, key, `/api/search?q=${q}&organizationId=${org}`)).text) as {
        hits: unknown[];
      }
    ).hits.length;
  expect(
    await until(
      () => hits('hello'),
      (n) => n > 0,
    ),
  ).toBeGreaterThan(0);
  expect(await hits(SECRET)).toBe(0);
  return sessions.length;
}

async function ownerWithKey(dataDir: string) {
  const owner = await seedOwner(dataDir);
  const key = await ok(cliIn(dataDir)('key', 'create', '--workspace', owner.org));
  return { ...owner, key };
}

/** Adds the folders as sources through the server, as an owner does in Settings. */
async function follow(
  serve: ServeProcess,
  email: string,
  org: string,
  roots: Partial<Record<HistoryKind, string>>,
) {
  const cookie = await signInAt(serve.url, email);
  for (const [kind, rootDir] of Object.entries(roots)) {
    const response = await fetch(`${serve.url}/api/workspaces/${org}/history-sources`, {
      method: 'POST',
      headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
      body: JSON.stringify({ kind, rootDir }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
  }
}

describe('links planted in a followed folder', () => {
  it('are never followed, by the command or the follower: the secret is in no session, and each is reported', async () => {
    const base = sandbox.dataDir();
    const secret = secretOutside(base);
    const roots = {
      'claude-code': finishedRoot(base, 'claude-code', '2.1.330', 'plain-answer'),
      codex: finishedRoot(base, 'codex', '0.169.0', 'plain-answer'),
      gemini: finishedRoot(base, 'gemini', '0.61.0', 'plain-answer'),
      'qwen-code': finishedRoot(base, 'qwen-code', '0.24.4', 'write-and-commit'),
    };
    const planted = Object.fromEntries(
      (Object.keys(roots) as (keyof typeof roots)[]).map((kind) => [
        kind,
        plantLinks(kind, roots[kind], secret),
      ]),
    ) as Record<HistoryKind, string[]>;

    // The command: only the real sessions come in, and each link is named in its source's report.
    const dataDir = sandbox.dataDir();
    const owner = await ownerWithKey(dataDir);
    const run = await historyImport(dataDir, roots, owner.org);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    const serve = await sandbox.serve(dataDir);
    expect(await expectNoSecret(serve, owner.key, owner.org)).toBe(5);
    await serve.stop();
    for (const kind of Object.keys(roots) as HistoryKind[]) {
      for (const path of planted[kind]) expect(run.stdout).toContain(`  skipped ${path}: a symbolic link`);
    }
    expect(run.stdout).toMatch(/^claude-code: 2 sessions \(2 new, 0 updated\)/mu);
    expect(run.stdout).toMatch(/^codex: 1 sessions \(1 new, 0 updated\)/mu);
    expect(run.stdout).toMatch(/^gemini: 1 sessions \(1 new, 0 updated\)/mu);
    expect(run.stdout).toMatch(/^qwen-code: 1 sessions \(1 new, 0 updated\)/mu);

    // The follower of a running server: the same, and each link is in the log once.
    const followed = sandbox.dataDir();
    const other = await ownerWithKey(followed);
    const server = await sandbox.serve(followed);
    await follow(server, other.email, other.org, roots);
    const imported = await until(
      async () => (await sessionsOf(server, other.key, other.org)).sessions.length,
      (n) => n === 5,
      30_000,
    );
    expect(imported).toBe(5);
    expect(await expectNoSecret(server, other.key, other.org)).toBe(5);
    // Each once, not at every scan.
    for (const line of await expectNotRead(server, roots, planted, 'a symbolic link'))
      expect(server.stderr().split(line).length - 1).toBe(1);
  }, 120_000);
});

describe('named pipes planted in a followed folder', () => {
  it('never stop the server answering, nor the import finishing', async () => {
    const base = sandbox.dataDir();
    const roots = {
      'claude-code': finishedRoot(base, 'claude-code', '2.1.330', 'sub-agent'),
      codex: finishedRoot(base, 'codex', '0.169.0', 'plain-answer'),
      gemini: finishedRoot(base, 'gemini', '0.61.0', 'plain-answer'),
      'qwen-code': finishedRoot(base, 'qwen-code', '0.24.4', 'write-and-commit'),
    };
    const pipes = Object.fromEntries(
      (Object.keys(roots) as (keyof typeof roots)[]).map((kind) => [kind, plantPipes(kind, roots[kind])]),
    ) as Record<HistoryKind, string[]>;

    // A running server follows the folders: it answers every request within 5 s meanwhile,
    // and the real sessions come in.
    const dataDir = sandbox.dataDir();
    const owner = await ownerWithKey(dataDir);
    const serve = await sandbox.serve(dataDir);
    await follow(serve, owner.email, owner.org, roots);
    const { sessions } = await until(
      () => sessionsOf(serve, owner.key, owner.org),
      (list) => list.sessions.length === 4,
      30_000,
    );
    // An imported Qwen Code session is the ACP agent's, as a session run with it is.
    expect(sessions.map((s) => s.agent).sort()).toEqual(['acp', 'claude-code', 'codex', 'gemini']);
    await expectNotRead(serve, roots, pipes, 'a named pipe');

    // The command ends, naming each pipe.
    const other = sandbox.dataDir();
    const { org } = await seedOwner(other);
    const run = await historyImport(other, roots, org);
    expect({ timedOut: run.timedOut, code: run.code, stderr: run.stderr }).toMatchObject({
      timedOut: false,
      code: 0,
    });
    for (const kind of Object.keys(roots) as HistoryKind[]) {
      for (const path of pipes[kind]) expect(run.stdout).toContain(`  skipped ${path}: a named pipe`);
    }
  }, 120_000);
});
