import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { STOP_GRACE_MS, waitForGroupEnd } from './process-group.js';

export interface ProcessRunOptions {
  program: string;
  args: string[];
  cwd: string;
  /** The whole environment the program gets (never the server's own). */
  env: NodeJS.ProcessEnv;
  stdin: string;
  timeoutMs: number;
  /** Aborted when the run is stopped: the program's whole process group is ended. */
  signal: AbortSignal;
  /** Told the process group's id once the program has started, so it can be recorded. */
  onStart?: ((pgid: number) => void) | undefined;
  graceMs?: number;
  /** Told each whole line the program writes to stderr, as it writes it. */
  onStderrLine?: ((line: string) => void) | undefined;
}

export interface ProcessExit {
  code: number | null;
  /** The program could not be started (ENOENT and the like). */
  error?: NodeJS.ErrnoException;
  timedOut: boolean;
  /** The end of what it wrote to stderr. */
  stderrTail: string;
}

export interface ProcessRun {
  stdout: Readable;
  /**
   * Resolves once the program has exited, its output has ended, and nothing it started is
   * left running: what stays in its process group after it exits is ended too.
   */
  ended: Promise<ProcessExit>;
}

const STDERR_KEPT = 4000;
const grouped = process.platform !== 'win32';

/**
 * Runs an agent's program in its own process group (agent CLIs start tools, which start
 * programs of their own), so that a stop, a time limit or the program's own exit can end
 * everything it started: SIGTERM to the group, then SIGKILL after a grace period.
 */
export function runProcess(options: ProcessRunOptions): ProcessRun {
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  const child = spawn(options.program, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: grouped,
  });
  const pgid = child.pid;
  if (pgid !== undefined && grouped) options.onStart?.(pgid);
  // A program that exits without reading its input must not fail the run with EPIPE.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin);
  let stderrTail = '';
  let stderrLine = '';
  const { onStderrLine } = options;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    stderrTail = (stderrTail + d).slice(-STDERR_KEPT);
    if (!onStderrLine) return;
    const lines = (stderrLine + d).split('\n');
    // A line is read up to the length of the tail kept: its start says what it is.
    stderrLine = (lines.pop() ?? '').slice(0, STDERR_KEPT);
    for (const line of lines) onStderrLine(line);
  });
  child.stderr.once('end', () => {
    if (stderrLine) onStderrLine?.(stderrLine);
  });

  let ending: Promise<void> | undefined;
  const endGroup = () => {
    ending ??= (async () => {
      if (pgid === undefined) return;
      if (!grouped) {
        child.kill('SIGTERM');
        return;
      }
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        /* the group is gone already */
      }
      await waitForGroupEnd(pgid, graceMs);
    })();
    return ending;
  };

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void endGroup();
  }, options.timeoutMs);
  const onAbort = () => void endGroup();
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  // What the program leaves behind in its group would hold its output open (and the sandbox).
  child.once('exit', () => void endGroup());

  const ended = new Promise<ProcessExit>((resolve) => {
    const finish = async (code: number | null, error?: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (!error) await endGroup();
      resolve({ code, timedOut, stderrTail: stderrTail.trim(), ...(error ? { error } : {}) });
    };
    child.once('error', (error: NodeJS.ErrnoException) => void finish(null, error));
    child.once('close', (code) => void finish(code));
  });
  return { stdout: child.stdout, ended };
}
