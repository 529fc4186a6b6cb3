import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processEnded } from '../../src-main/agents/process/process-group.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { startTimeOf } from '../../src-main/store/lock.js';
import { getSession } from '../helpers/agent-runs.js';
import { ROOT, startServe } from '../helpers/cli.js';
import { readServerJson } from '../helpers/cli-extra.js';
import { agentPid, transcript, waitForText, WAITING_AGENT } from '../helpers/run-control.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir, type TestServer } from '../helpers/server.js';
import { skipWithReason } from '../helpers/require-tools.js';

/** Every process a test started (or that its npx started), with its start time to tell it from a later one. */
const started: Array<{ pid: number; startTime: string | null }> = [];
const dirs: string[] = [];

const track = (pid: number) => started.push({ pid, startTime: startTimeOf(pid) });

afterEach(() => {
  for (const { pid, startTime } of started.splice(0)) {
    if (!processEnded(pid) && startTimeOf(pid) === startTime) process.kill(pid, 'SIGKILL');
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = tempDir('sessiondesk-npx-');
  dirs.push(dir, defaultSandboxRoot(dir));
  return dir;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

interface NpxServe {
  /** The process `npx` is: npm exec. */
  npx: ChildProcess;
  /** The shell npm runs the command in. */
  shell: number;
  /** The Node process that serves. */
  server: number;
  url: string;
  stderr: () => string;
  /** Settles once every process holding npx's output has ended. */
  closed: Promise<void>;
}

/**
 * `npx sessiondesk serve` as the manual runs it, with this machine's own npm, in a process
 * group of its own as a terminal's foreground job is.
 */
function npxServe(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<NpxServe> {
  return new Promise((resolve, reject) => {
    const npx = spawn('npx', ['sessiondesk', 'serve', '--port', '0', '--data-dir', dataDir], {
      cwd: ROOT,
      env: {
        ...process.env,
        npm_config_update_notifier: 'false',
        // The first npx in a checkout links it and runs its \`prepare\` (the whole build), which
        // would rewrite out/ under the tests that run the build meanwhile.
        npm_config_ignore_scripts: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (npx.pid !== undefined) track(npx.pid);
    const closed = new Promise<void>((done) => npx.on('close', () => done()));
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      npx.kill('SIGKILL');
      reject(new Error(`npx sessiondesk serve did not start in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    npx.on('error', reject);
    npx.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const onStdout = (d: Buffer) => {
      stdout += d.toString();
      // The printed URL carries the launch token; requests go to the server's own origin.
      const printed = /running at (http:\/\/\S+)/u.exec(stdout)?.[1];
      const url = printed === undefined ? undefined : new URL(printed).origin;
      if (!url) return;
      npx.stdout.off('data', onStdout);
      // Read on, so that the server never waits on a full pipe.
      npx.stdout.resume();
      clearTimeout(timer);
      try {
        const server = readServerJson(dataDir).pid;
        const shell = parentOf(server);
        track(server);
        track(shell);
        // The chain the stops are about: npm exec, the shell it runs the command in, the server.
        expect(parentOf(shell)).toBe(npx.pid);
        resolve({ npx, shell, server, url, stderr: () => stderr, closed });
      } catch (err) {
        reject(err as Error);
      }
    };
    npx.stdout.on('data', onStdout);
    npx.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`npx exited with ${code ?? signal}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Within 5 s the port stops answering, the server's process ends and the data directory's
 * lock is gone; the server said it was stopping (a clean stop, not a death), and a new
 * `serve` then takes the directory.
 */
async function expectCleanStop(serve: NpxServe, dataDir: string): Promise<void> {
  const stopped = async () =>
    !(await answers(serve.url)) &&
    processEnded(serve.server) &&
    !existsSync(join(dataDir, 'sessiondesk.lock'));
  await expect.poll(stopped, { timeout: 5_000, interval: 100 }).toBe(true);
  await serve.closed;
  expect(serve.stderr()).toMatch(/\d\d:\d\d:\d\d .*: stopping\n/u);
  expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
  const again = await startServe(dataDir, ['--log-level', 'silent']);
  track(again.child.pid!);
  expect(await again.stop()).toBe(0);
}

const linuxOnly = skipWithReason(process.platform === 'linux' ? null : 'it reads /proc: Linux only');

describe('npx sessiondesk serve, stopped', linuxOnly, () => {
  // SIGINT to npm's process alone is not among them: npm passes it to its shell, which holds it
  // until the command ends (docs/reference/command-line.md, "Stopping `serve`"); a terminal's Ctrl+C goes to the whole group.
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    it(`by ${signal} to the npx process, stops the server cleanly`, async () => {
      const dataDir = newDataDir();
      const serve = await npxServe(dataDir);
      serve.npx.kill(signal);
      await expectCleanStop(serve, dataDir);
    }, 120_000);
  }

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`by ${signal} to the server's own process, stops it cleanly`, async () => {
      const dataDir = newDataDir();
      const serve = await npxServe(dataDir);
      process.kill(serve.server, signal);
      await expectCleanStop(serve, dataDir);
    }, 120_000);
  }

  it('by Ctrl+C (SIGINT to the process group of npx), stops the server cleanly', async () => {
    const dataDir = newDataDir();
    const serve = await npxServe(dataDir);
    process.kill(-serve.npx.pid!, 'SIGINT');
    await expectCleanStop(serve, dataDir);
  }, 120_000);

  it('by SIGKILL of the npx process, stops the server cleanly and its running agent with it', async () => {
    const dataDir = newDataDir();
    const seeded = await seedDataDir(dataDir);
    const serve = await npxServe(dataDir, {
      SESSIONDESK_AGENT_COMMAND: JSON.stringify(WAITING_AGENT),
    });
    const server = { url: serve.url, origin: serve.url } as TestServer;
    const signIn = await fetch(`${serve.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: seeded.email, password: seeded.password }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const created = await fetch(`${serve.url}/api/sessions`, {
      method: 'POST',
      headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId: seeded.organizationId, initialMessage: 'Outlive npx' }),
    });
    const { session } = (await created.json()) as { session: { id: string } };
    const sandboxRoot = defaultSandboxRoot(dataDir);
    const leader = await agentPid(sandboxRoot, session.id, 'leader');
    const child = await agentPid(sandboxRoot, session.id, 'child');
    track(leader);
    track(child);
    await waitForText(server, cookie, session.id, 'Working on: Outlive npx');

    serve.npx.kill('SIGKILL');
    await expectCleanStop(serve, dataDir);
    expect(processEnded(leader)).toBe(true);
    expect(processEnded(child)).toBe(true);

    const again = await startServe(dataDir, ['--log-level', 'silent']);
    track(again.child.pid!);
    try {
      const after = await getSession({ ...server, url: again.url, origin: again.url }, cookie, session.id);
      expect(after.status).toBe('failed');
      expect(transcript(after).at(-1)).toBe('result: Session Desk was stopped while the agent was running.');
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 120_000);
});
