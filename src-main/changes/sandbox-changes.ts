import { copyFile, lstat, mkdtemp, realpath, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  CHANGES_LIMITS,
  type ChangesUnavailable,
  type SessionChangesResponse,
} from '../../src-shared/changes.js';
import { DiffOutputParser, type DiffCaps } from './diff-output.js';
import {
  GIT_TIMEOUT_MS,
  GitError,
  gitOutput,
  lastLine,
  neutralisedFilters,
  spawnGit,
  type GitContext,
} from './git.js';

const unavailable = (reason: ChangesUnavailable['reason'], message: string): ChangesUnavailable => ({
  available: false,
  reason,
  message,
});

export interface SandboxChangesInput {
  /** The session's sandbox folder. */
  dir: string;
  baseBranch: string;
  /** The server's environment; git sees the agents' allow-listed part of it. */
  env: NodeJS.ProcessEnv;
  now: Date;
  caps?: DiffCaps;
}

/**
 * A sandbox's changes against its base branch: what the agent committed on its branch since
 * it left the base, and what it left uncommitted (staged, unstaged and untracked files that
 * are not ignored), as one comparison of the merge base with the working tree. Read-only: the
 * repository's own index is copied, never written.
 */
export async function sandboxChanges(input: SandboxChangesInput): Promise<SessionChangesResponse> {
  const missing = await checkSandboxFolder(input.dir);
  if (missing) return missing;
  const base: GitContext = { cwd: input.dir, sourceEnv: input.env, deadline: Date.now() + GIT_TIMEOUT_MS };
  try {
    return await compare(input, base);
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    return unavailable(err.kind === 'timeout' ? 'timeout' : 'git_failed', err.message);
  }
}

/** The sandbox must be a real folder (not a link an agent put in its place). */
async function checkSandboxFolder(dir: string): Promise<ChangesUnavailable | null> {
  try {
    const stat = await lstat(dir);
    if (stat.isDirectory()) return null;
    return unavailable('no_sandbox', "The session's sandbox is not a folder any more.");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return unavailable(
      'no_sandbox',
      "The session's sandbox does not exist (the agent has not started yet, or the folder was removed).",
    );
  }
}

async function compare(input: SandboxChangesInput, git: GitContext): Promise<SessionChangesResponse> {
  const where = await gitOutput(git, ['rev-parse', '--show-toplevel', '--git-path', 'index']);
  const [toplevel = '', indexPath = ''] = (where ?? '').split('\n');
  // The repository must be the sandbox itself, not one it points to or one above it.
  if (where === null || (await realpath(toplevel).catch(() => '')) !== (await realpath(input.dir))) {
    return unavailable(
      'not_a_repository',
      "The session's sandbox is not a git repository (the clone may have failed).",
    );
  }

  const baseRef = await findBaseRef(git, input.baseBranch);
  if (!baseRef) {
    return unavailable('no_base', `The base branch ${input.baseBranch} is not in the sandbox's repository.`);
  }
  const headCommit = (await gitOutput(git, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']))?.trim();
  if (!headCommit) return unavailable('no_base', "The sandbox's repository has no commit checked out.");
  const mergeBase = (await gitOutput(git, ['merge-base', baseRef.commit, headCommit]))?.trim();
  if (!mergeBase) {
    return unavailable(
      'no_base',
      `The checked-out commit does not descend from ${input.baseBranch}: there is no common ancestor to compare with.`,
    );
  }
  const headBranch = (await gitOutput(git, ['symbolic-ref', '--quiet', '--short', 'HEAD']))?.trim() || null;

  const extraConfig = await neutralisedFilters(git);
  const temp = await mkdtemp(join(tmpdir(), 'sessiondesk-changes-'));
  try {
    const withIndex: GitContext = { ...git, extraConfig, indexFile: join(temp, 'index') };
    await copyIndex(
      isAbsolute(indexPath) ? indexPath : join(input.dir, indexPath),
      withIndex.indexFile ?? '',
    );
    await markUntracked(withIndex);
    const parsed = await diffAgainst(withIndex, mergeBase, input.caps ?? CHANGES_LIMITS);
    return {
      available: true,
      base: { branch: input.baseBranch, ref: baseRef.ref, mergeBase },
      head: { branch: headBranch, commit: headCommit },
      ...parsed,
      computedAt: input.now.toISOString(),
    };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** The base as the clone fetched it, else a local branch of that name. */
async function findBaseRef(git: GitContext, branch: string): Promise<{ ref: string; commit: string } | null> {
  for (const ref of [`refs/remotes/origin/${branch}`, `refs/heads/${branch}`]) {
    const commit = (await gitOutput(git, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]))?.trim();
    if (commit) return { ref, commit };
  }
  return null;
}

/**
 * The copy keeps the index's own time: git trusts an entry whose file looks unchanged since it
 * was staged only when the file is older than the index ("racy git"). A copy dated now would
 * pass an edit of the same size, made in the second the file was staged, as unchanged.
 */
async function copyIndex(from: string, to: string): Promise<void> {
  try {
    await copyFile(from, to);
    const { atime, mtime } = await stat(from);
    await utimes(to, atime, mtime);
  } catch (err) {
    // A repository with nothing staged yet has no index: git starts from an empty one.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Untracked files (those not ignored) are added to the copied index as "intent to add", so the
 * comparison with the working tree shows them as new files, with their contents.
 */
async function markUntracked(git: GitContext): Promise<void> {
  const list = spawnGit(git, ['ls-files', '-z', '--others', '--exclude-standard']);
  const add = spawnGit(
    git,
    ['add', '--intent-to-add', '--pathspec-from-file=-', '--pathspec-file-nul'],
    'pipe',
  );
  // If add fails early, the rest of the list has nowhere to go; its exit code says why.
  add.child.stdin?.on('error', () => undefined);
  if (list.child.stdout && add.child.stdin) list.child.stdout.pipe(add.child.stdin);
  const [listed, added] = await Promise.all([list.exited, add.exited]);
  if (listed.code !== 0)
    throw new GitError(`git could not list untracked files: ${lastLine(listed.stderr)}`, 'failed');
  if (added.code !== 0)
    throw new GitError(`git could not read untracked files: ${lastLine(added.stderr)}`, 'failed');
}

async function diffAgainst(git: GitContext, mergeBase: string, caps: DiffCaps) {
  const diff = spawnGit(git, [
    'diff',
    '--raw',
    '--numstat',
    '--patch',
    '-z',
    '--find-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    '--ignore-submodules=dirty',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    mergeBase,
    '--',
  ]);
  const parser = new DiffOutputParser(caps, () => diff.stop());
  let unreadable: unknown = null;
  diff.child.stdout?.on('data', (chunk: Buffer) => {
    if (unreadable !== null) return;
    try {
      parser.push(chunk);
    } catch (err) {
      unreadable = err;
      diff.stop();
    }
  });
  const { code, stderr, stopped } = await diff.exited;
  if (unreadable !== null) throw unreadable;
  if (code !== 0 && !stopped)
    throw new GitError(`git could not compare the sandbox: ${lastLine(stderr)}`, 'failed');
  return parser.finish();
}
