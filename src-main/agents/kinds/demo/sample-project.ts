import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../../paths.js';
import { spawnGit, GIT_TIMEOUT_MS, neutralisedFilters, type GitContext } from '../../../changes/git.js';
import { readSmallFile, SkippedEntry } from '../../../history/safe-files.js';
import { CLIENT_FILE_MAX_BYTES, RefusedFileRequest, writeTextFile } from '../acp/acp-files.js';
import { prepareSandbox, SandboxError, type GitIdentity } from '../../sandbox/session-folder.js';

/**
 * The demo agent's sample project: a few plain files shipped with Session Desk (inside
 * app.asar in the packaged app, where only Node's own fs can read them, not git). They become
 * a bare repository once, beside the sessions' folders, and each session's folder is a real
 * `git clone` of it, made as a real agent's is (prepareSandbox).
 */
export const SAMPLE_PROJECT_FILES = join(
  PROJECT_ROOT,
  'src-main',
  'agents',
  'kinds',
  'demo',
  'sample-project',
);

/** The one branch of the sample project. */
export const SAMPLE_BRANCH = 'main';

/** Who made the sample project's first commit (the person's own name is for their sessions' work). */
const SAMPLE_AUTHOR = ['user.name=Session Desk', 'user.email=demo@sessiondesk.local'];

/**
 * Settings of the person's own git that would change what the demo's git does or have it run
 * a program (a signing key, hooks); the rest of their configuration applies, as to a real agent.
 */
const DEMO_GIT_CONFIG = ['commit.gpgsign=false', 'tag.gpgsign=false', 'core.autocrlf=false'];

/** The sample project's files, by their path in it (forward slashes). */
async function sampleFiles(dir = SAMPLE_PROJECT_FILES, prefix = ''): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    if ((await stat(path)).isDirectory()) {
      for (const [sub, content] of await sampleFiles(path, rel)) files.set(sub, content);
    } else {
      files.set(rel, await readFile(path));
    }
  }
  return files;
}

/** What git said, and whether it succeeded. */
export interface GitRun {
  code: number | null;
  /** stdout, then stderr: what a person at a terminal would have read. */
  output: string;
}

/**
 * Runs git in `dir` as the changes view does (changes/git.ts): none of the folder's own hooks,
 * filters or fsmonitor run, and git looks no higher than the folder. A session's folder may
 * have been worked in by another agent before a follow-up reached the demo.
 */
export async function demoGit(
  dir: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  more: { config?: string[] } = {},
): Promise<GitRun> {
  const base: GitContext = { cwd: dir, sourceEnv: env, deadline: Date.now() + GIT_TIMEOUT_MS };
  const ctx: GitContext = {
    ...base,
    extraConfig: [...DEMO_GIT_CONFIG, ...(more.config ?? []), ...(await neutralisedFilters(base))],
  };
  const git = spawnGit(ctx, args);
  let stdout = '';
  git.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  const { code, stderr } = await git.exited;
  return { code, output: `${stdout}${stderr}`.trimEnd() };
}

/** Runs git where it must succeed (the sample's own repositories): an error saying what failed. */
async function mustGit(dir: string, env: NodeJS.ProcessEnv, args: string[], what: string): Promise<void> {
  const run = await demoGit(dir, env, args, { config: SAMPLE_AUTHOR });
  if (run.code !== 0) throw new SandboxError(`${what} failed.\n\n${run.output}`);
}

/** Origins made or being made by this process, by path: two runs at once make one. */
const origins = new Map<string, Promise<string>>();

/**
 * The sample project as a bare repository in `sandboxes` (the folder of the sessions' folders),
 * named by its files' hash: made once, in a temporary folder renamed into place, so a run never
 * clones a half-made one and a newer version of the files makes a repository of its own.
 */
export async function sampleOrigin(sandboxes: string, env: NodeJS.ProcessEnv): Promise<string> {
  const files = await sampleFiles();
  const hash = createHash('sha256');
  for (const [path, content] of files) hash.update(`${path}\0${content.length}\0`).update(content);
  const origin = join(sandboxes, `demo-project-${hash.digest('hex').slice(0, 12)}.git`);
  const made = origins.get(origin) ?? makeOrigin(origin, files, env);
  origins.set(origin, made);
  return made.catch((err: unknown) => {
    origins.delete(origin);
    throw err;
  });
}

async function makeOrigin(origin: string, files: Map<string, Buffer>, env: NodeJS.ProcessEnv) {
  if ((await stat(origin).catch(() => null))?.isDirectory()) return origin;
  await mkdir(dirname(origin), { recursive: true, mode: 0o700 });
  const temp = await mkdtemp(join(dirname(origin), '.demo-project-'));
  try {
    const work = join(temp, 'work');
    await mkdir(work);
    for (const [path, content] of files) {
      await mkdir(dirname(join(work, path)), { recursive: true });
      await writeFile(join(work, path), content);
    }
    // Written straight into a bare repository: git's transports stay off (changes/git.ts).
    const bare = ['--git-dir=origin.git', '--work-tree=work'];
    await mustGit(
      temp,
      env,
      ['init', '--quiet', '--bare', `--initial-branch=${SAMPLE_BRANCH}`, 'origin.git'],
      'Making the sample project',
    );
    await mustGit(temp, env, [...bare, 'add', '--all'], 'Adding its files');
    await mustGit(
      temp,
      env,
      [...bare, 'commit', '--quiet', '--no-verify', '-m', 'The sample project'],
      'Committing them',
    );
    await rm(join(temp, 'origin.git', 'index'), { force: true });
    try {
      await rename(join(temp, 'origin.git'), origin);
    } catch (err) {
      // Another process made it first: the same files, the same commit.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
    }
    return origin;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * A session's folder made ready for the demo agent: a clone of the sample project on a new
 * working branch, as a real agent's folder is made from its repository; a folder that holds
 * one already (a follow-up) is worked in as it is. When the session names another base branch
 * than the sample's one, a local branch of that name marks where the work began, so that the
 * session's changes are read against it. Returns whether it cloned now.
 */
export async function prepareDemoFolder(options: {
  dir: string;
  branch: string;
  baseBranch: string;
  env: NodeJS.ProcessEnv;
  identity?: GitIdentity | undefined;
  signal: AbortSignal;
}): Promise<boolean> {
  const { dir, env } = options;
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (entries !== null && entries.length > 0) {
    if (!entries.includes('.git')) {
      throw new SandboxError(
        "This session's folder holds files that are not a clone of the demo's sample project: the demo agent leaves them alone.",
      );
    }
    return false;
  }
  await prepareSandbox({
    dir,
    repoUrl: await sampleOrigin(dirname(dir), env),
    baseBranch: SAMPLE_BRANCH,
    branch: options.branch,
    env,
    identity: options.identity,
    signal: options.signal,
  });
  if (options.baseBranch !== SAMPLE_BRANCH) {
    const marked = await demoGit(dir, env, ['branch', options.baseBranch, `origin/${SAMPLE_BRANCH}`]);
    if (marked.code !== 0) throw new SandboxError(`Marking the base branch failed.\n\n${marked.output}`);
  }
  return true;
}

/** A text file of the session's folder, or undefined when there is none; never through a link. */
export async function readFolderFile(dir: string, path: string): Promise<string | undefined> {
  try {
    return await readSmallFile(dir, join(dir, path), CLIENT_FILE_MAX_BYTES);
  } catch (err) {
    if (err instanceof SkippedEntry) throw new SandboxError(err.message);
    throw err;
  }
}

/** Writes a text file of the session's folder whole, its folders made; never through a link. */
export async function writeFolderFile(dir: string, path: string, content: string): Promise<void> {
  try {
    await writeTextFile(dir, { path: join(dir, path), content });
  } catch (err) {
    if (err instanceof RefusedFileRequest) throw new SandboxError(err.message);
    throw err;
  }
}
