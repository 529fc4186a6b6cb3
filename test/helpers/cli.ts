import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, worksOnTeamDatabase, type Command } from '../../src-main/cli/usage.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(ROOT, 'bin', 'sessiondesk.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command that `args` name, when they name one. */
function commandOf(args: string[]): Command | undefined {
  const named = [`${args[0] ?? ''} ${args[1] ?? ''}`, args[0] ?? ''];
  return (COMMANDS as string[]).find((c) => named.includes(c)) as Command | undefined;
}

/**
 * Under the PostgreSQL pass (SESSIONDESK_TEST_DATABASE=postgres, vitest.postgres.config.ts), the
 * team database of a command given `--data-dir DIR`, as SESSIONDESK_DATABASE_URL: the command
 * then works on it as on a team server, and every command and server over DIR share one
 * database. Elsewhere (the sql.js pass, Playwright) nothing: the data directory alone.
 */
async function teamDatabaseEnv(args: string[], env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  if (process.env.SESSIONDESK_TEST_DATABASE !== 'postgres') return {};
  // Commands that work on a data directory alone, as each serving process's own: their help
  // says they refuse a team database.
  const command = commandOf(args);
  if (command !== undefined && !worksOnTeamDatabase(command)) return {};
  if (env.SESSIONDESK_DATABASE_URL !== undefined || args.includes('--database')) return {};
  const at = args.indexOf('--data-dir');
  const dataDir = at === -1 ? undefined : args[at + 1];
  if (dataDir === undefined) return {};
  // Loaded only here: it reads vitest's injected cluster, which Playwright's workers lack.
  const { databaseFor } = await import('./test-database.js');
  return { SESSIONDESK_DATABASE_URL: await databaseFor(dataDir) };
}

/** Runs the real `sessiondesk` command as a child process, with `input` on its stdin if given. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...(await teamDatabaseEnv(args, env)), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Without input, stdin is at its end at once, as from /dev/null.
  child.stdin.end(input ?? '');
  return outcome(child);
}

/** The exit code and everything a child wrote, once it has ended. */
function outcome(child: ChildProcess): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServeProcess {
  child: ChildProcess;
  /** Where the server listens (the origin, as in server.json). */
  url: string;
  /** The URL `serve` printed, with the launch token: what a person opens. */
  launchUrl: string;
  /**
   * The token of `launchUrl`, for tests that set up over HTTP (see `launchCookie`); with a
   * public URL, the setup code it printed.
   */
  launchToken: string;
  stdout: () => string;
  stderr: () => string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no cleanup of any kind. */
  kill(): Promise<void>;
}

/** Starts `sessiondesk serve --port 0` on a data directory and waits for the URL line. */
export function startServe(
  dataDir: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  return spawnServe(['--port', '0', '--data-dir', dataDir, ...extraArgs], env);
}

/** Starts `sessiondesk serve` with exactly these arguments and waits for the URL line. */
export async function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const database = await teamDatabaseEnv(args, env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...database, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 30_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // The whole line: a chunk may end inside the URL.
      // With a public URL: "running at https://… (this process listens on http://…)".
      const match = /running at (https?:\/\/\S+)(?: \(this process listens on (http:\/\/\S+)\))?\r?\n/u.exec(
        stdout,
      );
      // A public URL's setup code comes on a later line: wait for the last one, "Logging …".
      if (match?.[1] && (!match[2] || /\nLogging .*\n/u.test(stdout))) {
        clearTimeout(timer);
        const printed = new URL(match[1]);
        const setupCode = /setup code ([0-9A-Z]{4}(?:-[0-9A-Z]{4}){3})/u.exec(stdout)?.[1];
        resolve({
          child,
          url: match[2] ? new URL(match[2]).origin : printed.origin,
          launchUrl: printed.href,
          launchToken: setupCode ?? printed.searchParams.get('token') ?? '',
          stdout: () => stdout,
          stderr: () => stderr,
          async stop() {
            child.kill('SIGTERM');
            return exited;
          },
          async kill() {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/**
 * Runs a command line as a person pastes it into a terminal: by `sh -c`, quoting and all, with
 * `sessiondesk` on PATH as this checkout's command.
 */
export async function runInShell(line: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const bin = mkdtempSync(join(tmpdir(), 'sessiondesk-bin-'));
  try {
    const shim = join(bin, 'sessiondesk');
    writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`, { mode: 0o755 });
    const child = spawn('sh', ['-c', line], {
      cwd: ROOT,
      env: { ...process.env, ...env, PATH: `${bin}${delimiter}${env.PATH ?? process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return await outcome(child);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

/** The ACP probe agent: test/fixtures/agents/acp-probe-agent.mjs. */
export const ACP_PROBE = join(ROOT, 'test', 'fixtures', 'agents', 'acp-probe-agent.mjs');

/** `acp-agent set probe` on a data directory through the real CLI: the probe, with its options. */
export function setAcpProbe(dataDir: string, ...probeArgs: string[]): Promise<CliResult> {
  return runCli([
    'acp-agent',
    'set',
    'probe',
    '--data-dir',
    dataDir,
    '--',
    process.execPath,
    ACP_PROBE,
    ...probeArgs,
  ]);
}
