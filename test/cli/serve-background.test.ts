import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { requireTools, skipWithReason } from '../helpers/require-tools.js';
import { afterEach, describe, expect, it } from 'vitest';
import { processEnded } from '../../src-main/agents/process/process-group.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { STARTER_CHECK_MS } from '../../src-main/cli/parent-watch.js';
import { startTimeOf } from '../../src-main/store/lock.js';
import { CLI } from '../helpers/cli.js';
import { readServerJson } from '../helpers/cli-extra.js';
import { tempDir } from '../helpers/server.js';
import { until } from '../helpers/until.js';

/**
 * `sessiondesk serve` started in the background, as people and scripts do, outlives whatever
 * started it: only npm going away (under `npx`, see npx-stop.test.ts) and signals stop it.
 */

const started: Array<{ pid: number; startTime: string | null }> = [];
const dirs: string[] = [];

afterEach(() => {
  for (const { pid, startTime } of started.splice(0)) {
    if (!processEnded(pid) && startTimeOf(pid) === startTime) process.kill(pid, 'SIGKILL');
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** A terminal's or a script's environment: none of the variables npm gives its commands. */
const plainEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

function newDataDir(): string {
  const dir = tempDir('sessiondesk-bg-');
  dirs.push(dir, defaultSandboxRoot(dir));
  return dir;
}

/** The command line of `sessiondesk serve` on `dataDir`, its output to `serve.log` there. */
const serveCommand = (dataDir: string) =>
  `${quote(process.execPath)} ${quote(CLI)} serve --port 0 --data-dir ${quote(dataDir)} > ${quote(join(dataDir, 'serve.log'))} 2>&1`;

const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

async function answers(url: string): Promise<boolean> {
  try {
    // Unsigned, the list answers 401: the server is there.
    return (await fetch(`${url}/api/sessions`, { signal: AbortSignal.timeout(2000) })).status === 401;
  } catch {
    return false;
  }
}

/** The server's pid and URL once it has written server.json and answers. */
async function serverOf(dataDir: string): Promise<{ pid: number; url: string }> {
  const info = await until(
    async () => (existsSync(join(dataDir, 'server.json')) ? readServerJson(dataDir) : null),
    (found) => found !== null,
    30_000,
  );
  if (!info) throw new Error(`serve did not start:\n${logOf(dataDir)}`);
  started.push({ pid: info.pid, startTime: startTimeOf(info.pid) });
  expect(await answers(info.url)).toBe(true);
  return { pid: info.pid, url: info.url };
}

const logOf = (dataDir: string) => {
  const log = join(dataDir, 'serve.log');
  return existsSync(log) ? readFileSync(log, 'utf8') : '';
};

/**
 * With the process that started it gone (it was handed to another parent), the server
 * answers every request for three of the checks that would have seen that.
 */
async function expectItOutlives(server: { pid: number; url: string }, starter: number): Promise<void> {
  expect(
    await until(
      () => parentOf(server.pid),
      (parent) => parent !== starter,
    ),
  ).not.toBe(starter);
  const until3Checks = Date.now() + 3 * STARTER_CHECK_MS;
  while (Date.now() < until3Checks) {
    expect(await answers(server.url)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(processEnded(server.pid)).toBe(false);
}

/** It stops cleanly on `signal`: it says so, ends, and the data directory's lock is gone. */
async function expectCleanStopOn(signal: 'SIGTERM' | 'SIGHUP', server: { pid: number }, dataDir: string) {
  const stopped = await until(
    () => processEnded(server.pid) && !existsSync(join(dataDir, 'sessiondesk.lock')),
    (done) => done,
    15_000,
  );
  expect(stopped, logOf(dataDir)).toBe(true);
  expect(logOf(dataDir)).toContain(`${signal}: stopping`);
}

/** SIGTERM still stops it cleanly. */
async function expectCleanStop(server: { pid: number }, dataDir: string): Promise<void> {
  process.kill(server.pid, 'SIGTERM');
  await expectCleanStopOn('SIGTERM', server, dataDir);
}

const linuxOnly = skipWithReason(
  process.platform === 'linux' ? null : 'Linux only: serve recognises nohup through /proc (Linux)',
);

describe('sessiondesk serve started in the background', linuxOnly, () => {
  // As scripts do: start it in the background, wait until it is up, go on, and end.
  const upThenExit = (start: string) => `${start} &\nuntil [ -e server.json ]; do sleep 0.1; done`;
  for (const [how, start] of [
    ['nohup … &', (dataDir: string) => `nohup ${serveCommand(dataDir)}`],
    ['… < /dev/null &', (dataDir: string) => `${serveCommand(dataDir)} < /dev/null`],
    ['setsid … &', (dataDir: string) => `setsid ${serveCommand(dataDir)} < /dev/null`],
  ] as const) {
    it(`by a script that ends once it is up (${how}) keeps answering until it is stopped`, async () => {
      const dataDir = newDataDir();
      const script = spawn('sh', ['-c', upThenExit(start(dataDir))], {
        cwd: dataDir,
        env: plainEnv(),
        stdio: 'ignore',
      });
      const shell = script.pid!;
      await new Promise((resolve) => script.on('exit', resolve));
      const server = await serverOf(dataDir);
      await expectItOutlives(server, shell);
      await expectCleanStop(server, dataDir);
    }, 60_000);
  }
});

const hasScript = spawnSync('script', ['--version']).status === 0;

/**
 * A terminal, as `script` makes one: an interactive bash on a pseudo-terminal. Closing it hangs
 * bash up as closing the window does: bash passes SIGHUP on to its jobs and exits, and `script`
 * with it. The hang-up is sent to bash itself (`kill -HUP $$`, what the kernel sends it when the
 * window goes) rather than by killing `script`: then bash may also read end-of-file from the
 * vanished terminal before it handles the signal, and at end-of-file it exits without passing
 * SIGHUP on (huponexit is off), which would make this test race against bash, not the server.
 */
function terminal(cwd: string) {
  const script = spawn('script', ['-qfc', 'bash --norc --noprofile -i', '/dev/null'], {
    cwd,
    env: plainEnv(),
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  started.push({ pid: script.pid!, startTime: startTimeOf(script.pid!) });
  const exited = new Promise((resolve) => script.on('exit', resolve));
  return {
    type: (line: string) => script.stdin.write(`${line}\n`),
    async close() {
      script.stdin.write('kill -HUP $$\n');
      await exited;
    },
  };
}

describe(
  'sessiondesk serve in a terminal that closes',
  process.platform === 'linux'
    ? requireTools({ name: 'script (util-linux)', found: hasScript, install: 'apt-get install bsdutils' })
    : linuxOnly,
  () => {
    it('started with nohup … &, ignores the hang-up and keeps answering', async () => {
      const dataDir = newDataDir();
      const term = terminal(dataDir);
      term.type(`nohup ${serveCommand(dataDir)} &`);
      const server = await serverOf(dataDir);
      const shell = parentOf(server.pid);
      await term.close();
      expect(
        await until(
          () => logOf(dataDir),
          (log) => log.includes('SIGHUP ignored: started with nohup'),
        ),
      ).toContain('SIGHUP ignored: started with nohup');
      await expectItOutlives(server, shell);
      await expectCleanStop(server, dataDir);
    }, 60_000);

    it('started with … & (no nohup), stops cleanly on the hang-up', async () => {
      const dataDir = newDataDir();
      const term = terminal(dataDir);
      term.type(`${serveCommand(dataDir)} &`);
      const server = await serverOf(dataDir);
      await term.close();
      await expectCleanStopOn('SIGHUP', server, dataDir);
    }, 60_000);
  },
);
