import { spawn, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { agentEnvironment } from '../agents/sandbox/environment.js';

/**
 * Running git on a sandbox the agent controls. The repository's own configuration is the
 * agent's to write, so whatever in it could run a program or change the output's shape is
 * overridden on the command line: no pager, no external diff, no textconv, no fsmonitor, no
 * network, no look inside submodules, fixed prefixes and context. git sees the agents' allow-listed environment (never
 * Session Desk's own settings) and stops looking for a repository at the sandboxes folder.
 */
const FIXED_CONFIG = [
  'core.pager=cat',
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.quotePath=false',
  // git compares bigger files as binary without reading them whole; its default is 512 MiB.
  'core.bigFileThreshold=32m',
  'protocol.allow=never',
  'color.ui=false',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.relative=false',
  'diff.suppressBlankEmpty=false',
  'diff.context=3',
  'diff.interHunkContext=0',
  'advice.addEmptyPathspec=false',
  // A nested repository's own config (filters, fsmonitor, diff drivers) is not in the list
  // above: git must never enter one. Only the commit a submodule records is compared.
  'diff.ignoreSubmodules=dirty',
  'submodule.recurse=false',
];

/** Big enough for the two sides of any comparison git itself would do in memory. */
export const GIT_TIMEOUT_MS = 30_000;

export class GitError extends Error {
  constructor(
    message: string,
    readonly kind: 'missing' | 'timeout' | 'failed',
  ) {
    super(message);
  }
}

export interface GitContext {
  /** The sandbox: git runs there and looks no higher. */
  cwd: string;
  /** Where the server's environment comes from (the agents' allow-list is applied to it). */
  sourceEnv: NodeJS.ProcessEnv;
  /** Extra `-c name=value` settings, such as neutralised filter drivers. */
  extraConfig?: string[];
  /** Another index than the repository's own. */
  indexFile?: string;
  /** When the whole computation must be over (epoch milliseconds). */
  deadline: number;
}

export function gitEnvironment(ctx: GitContext): NodeJS.ProcessEnv {
  return {
    ...agentEnvironment(ctx.sourceEnv),
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_CEILING_DIRECTORIES: dirname(ctx.cwd),
    LC_ALL: 'C',
    ...(ctx.indexFile ? { GIT_INDEX_FILE: ctx.indexFile } : {}),
  };
}

export function gitArgs(ctx: GitContext, args: string[]): string[] {
  return [...[...FIXED_CONFIG, ...(ctx.extraConfig ?? [])].flatMap((c) => ['-c', c]), ...args];
}

export interface GitProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed), rejects with a GitError. */
  exited: Promise<{ code: number | null; stderr: string; stopped: boolean }>;
  /** Ends git early: what was read so far is all that is wanted. */
  stop(): void;
}

/** Spawns git (never through a shell) with the hygiene above and the deadline as a time limit. */
export function spawnGit(ctx: GitContext, args: string[], stdin: 'ignore' | 'pipe' = 'ignore'): GitProcess {
  const child = spawn('git', gitArgs(ctx, args), {
    cwd: ctx.cwd,
    env: gitEnvironment(ctx),
    stdio: [stdin, 'pipe', 'pipe'],
  });
  let stderr = '';
  let stopped = false;
  let timedOut = false;
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 16_384) stderr += d.toString('utf8');
  });
  const timer = setTimeout(
    () => {
      timedOut = true;
      child.kill('SIGKILL');
    },
    Math.max(0, ctx.deadline - Date.now()),
  );
  const exited = new Promise<{ code: number | null; stderr: string; stopped: boolean }>((resolve, reject) => {
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        err.code === 'ENOENT'
          ? new GitError('git is not installed (or not on PATH), so changes cannot be shown.', 'missing')
          : new GitError(`git could not run: ${err.message}`, 'failed'),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new GitError(`git took longer than ${GIT_TIMEOUT_MS / 1000} s to compare the sandbox.`, 'timeout'),
        );
      } else resolve({ code, stderr, stopped });
    });
  });
  return {
    child,
    exited,
    stop() {
      stopped = true;
      child.kill('SIGKILL');
    },
  };
}

/** Bytes read of a small answer (refs, paths, settings) before git is stopped. */
const SMALL_OUTPUT_MAX = 1024 * 1024;

/** Runs git for a small answer: its stdout, or null when it exits non-zero. */
export async function gitOutput(ctx: GitContext, args: string[]): Promise<string | null> {
  const git = spawnGit(ctx, args);
  const chunks: Buffer[] = [];
  let size = 0;
  git.child.stdout?.on('data', (d: Buffer) => {
    size += d.length;
    if (size > SMALL_OUTPUT_MAX) git.stop();
    else chunks.push(d);
  });
  const { code, stopped } = await git.exited;
  if (stopped) throw new GitError('git answered more than expected.', 'failed');
  return code === 0 ? Buffer.concat(chunks).toString('utf8') : null;
}

export const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

/**
 * Filter drivers run programs on the files being compared; the repository names them, so
 * each one it configures is switched off by name for these runs.
 */
export async function neutralisedFilters(git: GitContext): Promise<string[]> {
  const listed = await gitOutput(git, ['config', '--null', '--get-regexp', '^filter\\.']);
  const drivers = new Set<string>();
  for (const entry of (listed ?? '').split('\0')) {
    const key = entry.split('\n')[0] ?? '';
    const driver = /^filter\.(.+)\.[^.]+$/su.exec(key)?.[1];
    if (driver !== undefined) drivers.add(driver);
  }
  return [...drivers].flatMap((d) => [`filter.${d}.clean=`, `filter.${d}.smudge=`, `filter.${d}.process=`]);
}
