import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { tempDir } from './server.js';

/** The folder holding the stand-in `gh` (test/fixtures/gh/gh). */
export const FAKE_GH_DIR = join(ROOT, 'test', 'fixtures', 'gh');

export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

export interface GitHubFixture {
  root: string;
  /** The bare repository standing in for https://github.com/<repository>. */
  bare(repository?: string): string;
  /**
   * The server's environment: PATH with git and node (and gh unless `withGh` is false), a git
   * configuration of its own that sends https://github.com/ to the bare repositories.
   */
  env(options?: { withGh?: boolean }): NodeJS.ProcessEnv;
  /** git as the server runs it: github.com is the bare repositories. */
  git(cwd: string, ...args: string[]): string;
  /** Every argv the stand-in gh received, in order. */
  ghCalls(): string[][];
  /** The pull requests the stand-in holds, by "owner/repo". */
  pulls(): Record<string, Array<Record<string, unknown>>>;
  setPulls(pulls: Record<string, Array<Record<string, unknown>>>): void;
  signOut(signedOut: boolean): void;
  dispose(): void;
}

/**
 * github.com on this machine: bare repositories reached through `url.<base>.insteadOf` (in a
 * GIT_CONFIG_GLOBAL file of the test's own, never the user's), and the stand-in `gh` over them.
 */
export function createGitHubFixture(repositories = ['acme/widgets']): GitHubFixture {
  const root = tempDir('sessiondesk-github-');
  const remotes = join(root, 'remotes');
  const state = join(root, 'gh-state');
  const bin = join(root, 'bin');
  mkdirSync(state);
  mkdirSync(bin);
  // Only what the server needs: git and node, not the machine's own gh.
  symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
  symlinkSync(process.execPath, join(bin, 'node'));
  const gitConfig = join(root, 'gitconfig');
  writeFileSync(gitConfig, `[url "file://${remotes}/"]\n\tinsteadOf = https://github.com/\n`);

  const seed = join(root, 'seed');
  mkdirSync(seed);
  git(seed, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(seed, 'NOTES.md'), '# Widgets\n');
  git(seed, 'add', 'NOTES.md');
  git(
    seed,
    '-c',
    'user.name=Seed',
    '-c',
    'user.email=seed@example.test',
    'commit',
    '--quiet',
    '-m',
    'Initial commit',
  );
  for (const repository of repositories) {
    mkdirSync(join(remotes, repository, '..'), { recursive: true });
    git(root, 'clone', '--quiet', '--bare', seed, join(remotes, `${repository}.git`));
  }

  const pullsFile = join(state, 'pulls.json');
  return {
    root,
    bare: (repository = 'acme/widgets') => join(remotes, `${repository}.git`),
    git: (cwd, ...args) =>
      execFileSync('git', args, {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_GLOBAL: gitConfig, GIT_CONFIG_NOSYSTEM: '1' },
      }).trim(),
    env: ({ withGh = true } = {}) => ({
      PATH: withGh ? `${FAKE_GH_DIR}:${bin}` : bin,
      HOME: root,
      GIT_CONFIG_GLOBAL: gitConfig,
      GIT_CONFIG_NOSYSTEM: '1',
      FAKE_GH_STATE: state,
      FAKE_GH_REMOTES: remotes,
    }),
    ghCalls: () => {
      const file = join(state, 'calls.jsonl');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as string[]);
    },
    pulls: () =>
      existsSync(pullsFile)
        ? (JSON.parse(readFileSync(pullsFile, 'utf8')) as Record<string, Array<Record<string, unknown>>>)
        : {},
    setPulls: (pulls) => writeFileSync(pullsFile, JSON.stringify(pulls, null, 2)),
    signOut: (signedOut) => {
      const file = join(state, 'signed-out');
      if (signedOut) writeFileSync(file, '');
      else rmSync(file, { force: true });
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}
