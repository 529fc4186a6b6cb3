import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterEach, expect } from 'vitest';
import { runCli, spawnServe, startServe, type CliResult, type ServeProcess } from './cli.js';
import { tempDir } from './server.js';

export const PASSWORD = 'correct horse battery';
export const KEY_PATTERN = /^sdk_[A-Za-z0-9_-]{43}$/u;

/**
 * Temp data directories and `serve` processes for the current test, removed and stopped
 * after it whatever the outcome. Call once at the top of a test file.
 */
export function useSandbox() {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const track = (serve: ServeProcess): ServeProcess => {
    cleanups.push(async () => {
      if (serve.child.exitCode === null && serve.child.signalCode === null) await serve.kill();
    });
    return serve;
  };
  return {
    dataDir(): string {
      const dir = tempDir('sessiondesk-cli-');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
    async serve(dataDir: string, extraArgs: string[] = []): Promise<ServeProcess> {
      return track(await startServe(dataDir, extraArgs));
    },
    async serveWithEnv(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
      return track(await spawnServe(args, env));
    },
    defer(cleanup: () => unknown): void {
      cleanups.push(cleanup);
    },
  };
}

/** `runCli` bound to one data directory through `--data-dir`. */
export function cliIn(dataDir: string) {
  return (...args: string[]): Promise<CliResult> => runCli([...args, '--data-dir', dataDir]);
}

/** Asserts exit code 0 and returns stdout without its final newline. */
export async function ok(result: Promise<CliResult>): Promise<string> {
  const { code, stdout, stderr } = await result;
  expect({ code, stderr }).toMatchObject({ code: 0 });
  return stdout.replace(/\n$/u, '');
}

let emailCounter = 0;
export function cliEmail(name = 'user'): string {
  emailCounter += 1;
  return `${name}-${process.pid}-${emailCounter}@example.test`;
}

/** A user and a workspace they own, made with the CLI. */
export async function seedOwner(dataDir: string): Promise<{ email: string; userId: string; org: string }> {
  const cli = cliIn(dataDir);
  const email = cliEmail('owner');
  const userId = await ok(cli('user', 'create', '--email', email, '--name', 'Owner', '--password', PASSWORD));
  const org = await ok(cli('workspace', 'create', '--name', 'Owner space', '--owner', email));
  return { email, userId, org };
}

/** A key of the right shape that no server ever issued. */
export function bogusKey(): string {
  return `sdk_${randomBytes(32).toString('base64url').slice(0, 43)}`;
}

export function readServerJson(dataDir: string): { url: string; host: string; port: number; pid: number } {
  return JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8')) as {
    url: string;
    host: string;
    port: number;
    pid: number;
  };
}

export function readLockPid(dataDir: string): number | null {
  const path = join(dataDir, 'sessiondesk.lock');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { pid: number }).pid : null;
}

/** `GET /api/sessions` with the key in x-api-key; a wrong status fails with the body and the server's log. */
export async function expectSessionsStatus(
  serve: ServeProcess,
  key: string,
  status: number,
): Promise<unknown> {
  const response = await fetch(`${serve.url}/api/sessions`, { headers: { 'x-api-key': key } });
  const text = await response.text();
  const context = `body: ${text}\nserver log (tail):\n${serve.stderr().slice(-3000)}`;
  expect(response.status, context).toBe(status);
  return JSON.parse(text) as unknown;
}

/** Signs in over HTTP as the dashboard would and returns the `__session` cookie pair. */
export async function signInAt(url: string, email: string, password = PASSWORD): Promise<string> {
  const response = await fetch(`${url}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ email, password }),
  });
  expect(response.status).toBe(200);
  const pair = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  expect(pair).toMatch(/^__session=/u);
  return pair;
}

export async function workspacesOf(url: string, cookie: string): Promise<string[]> {
  const response = await fetch(`${url}/api/auth/me`, { headers: { cookie } });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { workspaces: Array<{ organizationId: string }> };
  return body.workspaces.map((w) => w.organizationId);
}

/** Resolves once the child's stdout and stderr are fully read (the 'exit' event can come first). */
export async function outputDrained(child: ChildProcess): Promise<void> {
  await Promise.all([child.stdout, child.stderr].map((s) => (s ? finished(s) : undefined)));
}

/** Polls until `condition` holds; fails with `what` after the timeout. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Listens on a free loopback port so that nothing else can. */
export async function occupyPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    port: address.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `sessiondesk history import` on `dataDir` in the home `home`, with no CLI folder named by the
 * environment: no default location of this machine is read. `env` adds to its environment.
 */
export function historyImportIn(dataDir: string, home: string, env: NodeJS.ProcessEnv = {}) {
  return (...args: string[]): Promise<CliResult> =>
    runCli(['history', 'import', ...args, '--data-dir', dataDir], {
      HOME: home,
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
      QWEN_HOME: '',
      QWEN_RUNTIME_DIR: '',
      XDG_DATA_HOME: '',
      ...env,
    });
}
