import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BRANCH_PATTERN } from '../../src-shared/repo-url.js';
import {
  GIT_TIMEOUT_MS as CHANGES_GIT_TIMEOUT_MS,
  GitError,
  gitOutput,
  neutralisedFilters,
  type GitContext,
} from '../changes/git.js';
import { AppError, conflict } from '../errors.js';
import { lastLines, runTool } from './run-tool.js';

const GIT_TIMEOUT_MS = 30_000;
/** A push carries the agent's commits over the network: it gets longer. */
export const PUSH_TIMEOUT_MS = 120_000;

/**
 * git in a sandbox never runs hooks: the agent could have written them, and they would run
 * with the push. (The agent runs as the user anyway; this keeps the push itself plain.)
 */
const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null'];

function git(dir: string, env: NodeJS.ProcessEnv, args: string[], timeoutMs = GIT_TIMEOUT_MS) {
  return runTool('git', [...NO_HOOKS, ...args], {
    cwd: dir,
    env: { ...env, GIT_TERMINAL_PROMPT: '0' },
    timeoutMs,
  });
}

/**
 * Checks that a session's sandbox can give a pull request: a clone of the session's repository
 * (its `origin` not pointed elsewhere), the branch present, and commits on it beyond the base.
 * Each refusal is a 409 saying what to do.
 */
export async function checkBranchToPush(options: {
  dir: string;
  env: NodeJS.ProcessEnv;
  repoUrl: string;
  branch: string;
  baseBranch: string;
}): Promise<void> {
  const { dir, env, repoUrl, branch, baseBranch } = options;
  if (!existsSync(join(dir, '.git'))) {
    throw conflict(
      "The session's sandbox holds no clone of the repository (the agent never cloned it here), so there is nothing to push.",
    );
  }
  if (branch === baseBranch) {
    throw conflict(
      `The agent's work is on ${baseBranch}, the base branch itself; a pull request needs a branch of its own. Ask the agent to move its commits to a new branch.`,
    );
  }
  if (!BRANCH_PATTERN.test(branch)) {
    throw conflict(`The branch name "${branch}" is not one Session Desk pushes; rename the branch.`);
  }
  const origin = await git(dir, env, ['config', '--get-all', 'remote.origin.url']);
  const pushUrl = await git(dir, env, ['config', '--get-all', 'remote.origin.pushurl']);
  if (origin.stdout.trim() !== repoUrl || pushUrl.stdout.trim() !== '') {
    throw conflict(
      `The sandbox's origin no longer points to ${repoUrl} alone, so Session Desk will not push from it. Set it back with: git remote set-url origin ${repoUrl}`,
    );
  }
  const local = await git(dir, env, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
  if (local.code !== 0) throw conflict(`The branch ${branch} no longer exists in the sandbox.`);
  const base = `refs/remotes/origin/${baseBranch}`;
  const ahead = await git(dir, env, ['rev-list', '--count', `${base}..refs/heads/${branch}`]);
  if (ahead.code !== 0) {
    throw conflict(
      `Could not compare ${branch} with ${baseBranch} in the sandbox:\n\n${lastLines(ahead.stderr)}`,
    );
  }
  if (Number(ahead.stdout.trim()) === 0) {
    throw conflict(
      (await hasUncommittedWork(dir, env))
        ? `${branch} has no commits beyond ${baseBranch}; the agent's changes are not committed. Ask it to commit them, then open the pull request.`
        : `No changes: ${branch} has no commits beyond ${baseBranch}, so there is nothing for a pull request.`,
    );
  }
}

/**
 * Whether the work tree differs from the last commit. `git status` would compare files through
 * the filters, fsmonitor and submodules the agent configured: it runs with the changes view's
 * hygiene instead (all of those off, nothing entered, nothing written).
 */
async function hasUncommittedWork(dir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const ctx: GitContext = { cwd: dir, sourceEnv: env, deadline: Date.now() + CHANGES_GIT_TIMEOUT_MS };
  try {
    const status = await gitOutput({ ...ctx, extraConfig: await neutralisedFilters(ctx) }, [
      'status',
      '--porcelain',
      '--ignore-submodules=dirty',
    ]);
    return status === null || status.trim() !== '';
  } catch (err) {
    if (err instanceof GitError) return true; // Unknown: the likelier cause is named.
    throw err;
  }
}

/** What git said when a push failed, with what to do about the usual causes. */
function pushFailure(branch: string, repoUrl: string, stderr: string, timedOut: boolean): AppError {
  const said = lastLines(stderr);
  let hint = '';
  if (timedOut) hint = `The push did not finish within ${PUSH_TIMEOUT_MS / 1000} s and was stopped.`;
  else if (/rejected|non-fast-forward|fetch first/iu.test(stderr))
    hint = `The remote refused the push: ${branch} there has commits the sandbox lacks. Ask the agent to pull and merge them, then try again.`;
  else if (
    /Authentication failed|could not read Username|Permission denied|\b403\b|terminal prompts disabled/iu.test(
      stderr,
    )
  )
    hint =
      'git has no credentials for the repository: run `gh auth setup-git` (or set up another credential helper or SSH) as the user running Session Desk.';
  return new AppError(
    502,
    'push_failed',
    `Pushing ${branch} to ${repoUrl} failed.${hint ? ` ${hint}` : ''}${said ? `\n\n${said}` : ''}`,
  );
}

/** Where git may take the push: the protocols that run no program of the repository's choosing. */
const PUSH_PROTOCOLS = 'https:ssh:file';

/**
 * Pushes the sandbox's branch to the session's recorded repository without reading anything
 * the agent wrote in the sandbox's git configuration (`url.*.pushInsteadOf`, an `ext::` address
 * with `protocol.ext.allow`, a credential helper, hooks): a clean temporary repository fetches
 * the branch from the sandbox (git's upload-pack, which git keeps safe to run on repositories
 * one does not trust) and pushes it to the explicit address. The user's own git configuration
 * (`url.<base>.insteadOf`, credentials, SSH) applies as to any push of theirs. Afterwards the
 * sandbox records the pushed branch as its upstream, so `git status` and `git pull` there follow it.
 */
export async function pushBranch(options: {
  dir: string;
  env: NodeJS.ProcessEnv;
  repoUrl: string;
  branch: string;
}): Promise<void> {
  const { dir, env, branch, repoUrl } = options;
  const ref = `refs/heads/${branch}`;
  const temp = await mkdtemp(join(tmpdir(), 'sessiondesk-push-'));
  try {
    const clean = (args: string[], protocols: string, timeoutMs = GIT_TIMEOUT_MS) =>
      runTool('git', [...NO_HOOKS, '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', ...args], {
        cwd: temp,
        env: { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: protocols, GIT_DIR: temp },
        timeoutMs,
      });
    const init = await clean(['init', '--quiet', '--bare', temp], 'file');
    if (init.startError) {
      throw new AppError(502, 'push_failed', `git could not run: ${init.startError.message}`);
    }
    if (init.code !== 0) throw pushFailure(branch, repoUrl, init.stderr, init.timedOut);
    const fetched = await clean(
      ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', dir, `+${ref}:${ref}`],
      'file',
    );
    if (fetched.code !== 0) {
      throw new AppError(
        502,
        'push_failed',
        `Reading ${branch} from the sandbox failed.\n\n${lastLines(fetched.stderr)}`,
      );
    }
    const commit = (await clean(['rev-parse', '--verify', '--quiet', ref], 'file')).stdout.trim();
    const push = await clean(
      ['push', '--no-verify', '--no-recurse-submodules', '--porcelain', '--', repoUrl, `${ref}:${ref}`],
      PUSH_PROTOCOLS,
      PUSH_TIMEOUT_MS,
    );
    if (push.code !== 0) throw pushFailure(branch, repoUrl, `${push.stderr}\n${push.stdout}`, push.timedOut);
    await recordUpstream(dir, env, branch, commit);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * What `push --set-upstream origin` would have left in the sandbox: origin's copy of the
 * branch and the branch's upstream. The clone fetched the base branch alone, so origin's
 * fetch refspecs gain this one too. Only written, never followed: git runs no program here.
 */
async function recordUpstream(dir: string, env: NodeJS.ProcessEnv, branch: string, commit: string) {
  const tracking = `+refs/heads/${branch}:refs/remotes/origin/${branch}`;
  const fetches = await git(dir, env, ['config', '--get-all', 'remote.origin.fetch']);
  if (!fetches.stdout.split('\n').includes(tracking)) {
    await git(dir, env, ['config', '--add', 'remote.origin.fetch', tracking]);
  }
  if (commit !== '') await git(dir, env, ['update-ref', `refs/remotes/origin/${branch}`, commit]);
  await git(dir, env, ['config', `branch.${branch}.remote`, 'origin']);
  await git(dir, env, ['config', `branch.${branch}.merge`, `refs/heads/${branch}`]);
}
