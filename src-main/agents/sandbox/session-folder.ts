import { spawn } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { branchName, type RunContext } from '../types.js';

export class SandboxError extends Error {}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program without a shell: every argument reaches it as is, whatever it contains. */
export function runProgram(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Where a session's sandbox lives: one folder per session under the sandboxes root. */
export function sandboxPath(sandboxRoot: string, sessionId: string): string {
  return join(sandboxRoot, sessionId);
}

const lastLines = (text: string, n = 5) => text.trim().split('\n').slice(-n).join('\n');

/**
 * Prepares a session's sandbox: with a repository, a real `git clone` of the base branch
 * (git's own configuration applies, `url.<base>.insteadOf` included) and a new working
 * branch; without one, an empty folder. Sandboxes are never deleted automatically, so
 * uncommitted work in one is never lost.
 */
export async function prepareSandbox(options: {
  dir: string;
  repoUrl?: string | undefined;
  baseBranch: string;
  branch: string;
  signal?: AbortSignal;
  /** The agent's allow-listed environment: git runs with it too. */
  env: NodeJS.ProcessEnv;
  /** Who the clone's commits are by: the session's author. */
  identity?: GitIdentity | undefined;
}): Promise<void> {
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  if (!options.repoUrl) return;
  if ((await readdir(options.dir)).length > 0) return; // Resumed: the clone is already there.
  let clone: ProcessResult;
  try {
    clone = await runProgram(
      'git',
      [
        'clone',
        '--quiet',
        '--branch',
        options.baseBranch,
        '--single-branch',
        '--',
        options.repoUrl,
        options.dir,
      ],
      {
        cwd: join(options.dir, '..'),
        env: { ...options.env, GIT_TERMINAL_PROMPT: '0' },
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SandboxError(
      code === 'ENOENT'
        ? 'git is not installed (or not on PATH), so the repository cannot be cloned.'
        : `git could not run: ${String(err)}`,
    );
  }
  if (clone.code !== 0) {
    const detail = lastLines(clone.stderr);
    const hint = /Remote branch .* not found/iu.test(clone.stderr)
      ? `The branch "${options.baseBranch}" does not exist in ${options.repoUrl}.`
      : `Cloning ${options.repoUrl} (branch ${options.baseBranch}) failed.`;
    throw new SandboxError(`${hint}\n\n${detail}`);
  }
  const checkout = await runProgram('git', ['checkout', '--quiet', '-b', options.branch], {
    cwd: options.dir,
    env: options.env,
  });
  if (checkout.code !== 0)
    throw new SandboxError(`Creating the branch ${options.branch} failed.\n\n${lastLines(checkout.stderr)}`);
  if (options.identity) await setIdentity(options.dir, options.identity, options.env);
}

export interface GitIdentity {
  name: string;
  email: string;
}

/**
 * The clone's own identity, in its local configuration: an agent whose shell ignores the
 * user's global one (Gemini CLI sets GIT_CONFIG_GLOBAL=/dev/null) can still commit.
 */
async function setIdentity(dir: string, identity: GitIdentity, env: NodeJS.ProcessEnv): Promise<void> {
  for (const [key, value] of [
    ['user.name', identity.name],
    ['user.email', identity.email],
  ] as const) {
    const set = await runProgram('git', ['config', '--local', key, value], { cwd: dir, env });
    if (set.code !== 0)
      throw new SandboxError(`Setting ${key} in the sandbox failed.\n\n${lastLines(set.stderr)}`);
  }
}

/**
 * A run's session folder made ready: cloned on the session's branch when it has a repository
 * (`prepareSandbox`). Returns the branch's name.
 */
export async function prepareRunFolder(
  ctx: Pick<RunContext, 'session' | 'sandboxDir'>,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<string> {
  const branch = branchName(ctx.session.title, ctx.session.id);
  await prepareSandbox({
    dir: ctx.sandboxDir,
    repoUrl: ctx.session.repoUrl,
    baseBranch: ctx.session.baseBranch,
    branch,
    ...(signal ? { signal } : {}),
    env,
    identity: ctx.session.author,
  });
  return branch;
}

/** A session's first run: its folder made ready, and its branch recorded when it has a repository. */
export async function prepareFirstRun(ctx: RunContext, env: NodeJS.ProcessEnv): Promise<void> {
  const branch = await prepareRunFolder(ctx, env, ctx.signal);
  if (ctx.session.repoUrl) await ctx.sink.branch(branch);
}
