import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Confinement, OsSandbox } from '../types.js';
import { STOP_GRACE_MS, waitForGroupEnd } from './process-group.js';
import {
  descendantsOf,
  groupMembers,
  processesWorkingIn,
  signalEach,
  stillRunning,
  type ProcessId,
} from './process-tree.js';

export interface ProcessRunOptions {
  program: string;
  args: string[];
  cwd: string;
  /** The whole environment the program gets (never the server's own). */
  env: NodeJS.ProcessEnv;
  /**
   * What the program reads: this text, then the end of its input; or `{ open: true }`, a pipe
   * the caller writes to as the run goes (a protocol spoken over stdio) and ends when done.
   */
  stdin: string | { open: true };
  timeoutMs: number;
  /** Aborted when the run is stopped: the program's whole process group is ended. */
  signal: AbortSignal;
  /** Told the process group's id once the program has started, so it can be recorded. */
  onStart?: ((pgid: number) => void) | undefined;
  graceMs?: number;
  /** Told each whole line the program writes to stderr, as it writes it. */
  onStderrLine?: ((line: string) => void) | undefined;
  /**
   * The operating-system sandbox the program runs in, and what it may see there. Without a
   * sandbox the program runs as is, and its process tree is followed instead.
   */
  confine?: { sandbox: OsSandbox; rules: Confinement } | undefined;
  /**
   * The session's own folder: where no sandbox holds the run, a process still working in it
   * when the run ends is the run's (a tool orphaned by its parent). Never a person's folder.
   */
  ownedFolder?: string | undefined;
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
  /** The program's input, when it was asked to stay open; else already ended. */
  stdin: Writable;
  /**
   * Resolves once the program has exited, its output has ended, and nothing it started is
   * left running: what stays in its process group after it exits is ended too.
   */
  ended: Promise<ProcessExit>;
  /** Stops the time limit until the returned function is called (a run waiting for a decision). */
  pauseTimeout(): () => void;
}

const STDERR_KEPT = 4000;
const grouped = process.platform !== 'win32';
/** How often a run outside a sandbox has its process tree read, to know every descendant. */
const TREE_POLL_MS = 500;

/**
 * Runs an agent's program in its own process group (agent CLIs start tools, which start
 * programs of their own), so that a stop, a time limit or the program's own exit can end
 * everything it started: SIGTERM to the group, then SIGKILL after a grace period.
 */
export function runProcess(options: ProcessRunOptions): ProcessRun {
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  const sandbox = options.confine?.sandbox;
  const { program, args } =
    sandbox?.isolation === 'sandbox' && options.confine
      ? sandbox.wrap(options.program, options.args, options.confine.rules, options.env, options.cwd)
      : { program: options.program, args: options.args };
  const child = spawn(program, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: grouped,
  });
  const pgid = child.pid;
  if (pgid !== undefined && grouped) options.onStart?.(pgid);
  // A program that exits without reading its input must not fail the run with EPIPE.
  child.stdin.on('error', () => undefined);
  if (typeof options.stdin === 'string') child.stdin.end(options.stdin);
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

  // Outside a sandbox, every descendant seen is remembered: one that starts a process session
  // of its own leaves the group, and once its parent is gone it leaves the tree too.
  const seen = new Map<number, ProcessId>();
  const followTree = sandbox?.isolation !== 'sandbox' && pgid !== undefined;
  const noteTree = () => {
    if (pgid !== undefined) for (const p of descendantsOf(pgid)) seen.set(p.pid, p);
  };
  const treeTimer = followTree ? setInterval(noteTree, TREE_POLL_MS) : undefined;
  treeTimer?.unref();
  const strays = (): ProcessId[] => {
    noteTree();
    const found = new Map(seen);
    if (options.ownedFolder) for (const p of processesWorkingIn(options.ownedFolder)) found.set(p.pid, p);
    found.delete(process.pid);
    return [...found.values()];
  };

  let ending: Promise<void> | undefined;
  const endGroup = () => {
    ending ??= (async () => {
      if (pgid === undefined) return;
      const others = followTree ? strays() : [];
      clearInterval(treeTimer);
      if (!grouped) {
        // Windows has no process groups to signal: taskkill ends the program's whole tree.
        spawn('taskkill', ['/pid', String(pgid), '/T', '/F'], { stdio: 'ignore' }).on('error', () =>
          child.kill('SIGTERM'),
        );
        return;
      }
      if (sandbox?.isolation === 'sandbox') {
        // Not to bubblewrap itself, which would die at once and take the sandbox with it: the
        // program is told first, so that it can save its state (a CLI writes its session file),
        // and its sandbox ends with it. Whatever is left is killed with the group after the grace.
        signalEach(
          groupMembers(pgid).filter((p) => p.pid !== pgid),
          'SIGTERM',
        );
      } else {
        try {
          process.kill(-pgid, 'SIGTERM');
        } catch {
          /* the group is gone already */
        }
      }
      signalEach(others, 'SIGTERM');
      await Promise.all([waitForGroupEnd(pgid, graceMs), endWithin(others, graceMs)]);
    })();
    return ending;
  };

  let timedOut = false;
  let exited = false;
  const timeOut = () => {
    timedOut = true;
    void endGroup();
  };
  let deadline = Date.now() + options.timeoutMs;
  let timer = setTimeout(timeOut, options.timeoutMs);
  /** While the run waits for a person, its time limit stands still. */
  let pauses = 0;
  let pausedAt = 0;
  const pauseTimeout = (): (() => void) => {
    if (pauses === 0) {
      clearTimeout(timer);
      pausedAt = Date.now();
    }
    pauses += 1;
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      pauses -= 1;
      if (pauses > 0 || timedOut || exited) return;
      deadline += Date.now() - pausedAt;
      timer = setTimeout(timeOut, Math.max(0, deadline - Date.now()));
    };
  };
  const onAbort = () => void endGroup();
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  // What the program leaves behind in its group would hold its output open (and the sandbox).
  child.once('exit', () => void endGroup());

  const ended = new Promise<ProcessExit>((resolve) => {
    const finish = async (code: number | null, error?: NodeJS.ErrnoException) => {
      exited = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (!error) await endGroup();
      resolve({ code, timedOut, stderrTail: stderrTail.trim(), ...(error ? { error } : {}) });
    };
    child.once('error', (error: NodeJS.ErrnoException) => void finish(null, error));
    child.once('close', (code) => void finish(code));
  });
  return { stdout: child.stdout, stdin: child.stdin, ended, pauseTimeout };
}

/** Gives the processes (sent SIGTERM already) `graceMs` to end, then sends SIGKILL. */
async function endWithin(list: ProcessId[], graceMs: number): Promise<void> {
  if (list.length === 0) return;
  const until = Date.now() + graceMs;
  while (Date.now() < until && list.some(stillRunning)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signalEach(list, 'SIGKILL');
}
