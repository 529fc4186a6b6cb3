import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHANGES_LIMITS,
  FullSessionResponseSchema,
  SessionChangesResponseSchema,
  type ChangedFile,
  type SessionChanges,
} from '../../src-shared/index.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { ROOT } from '../helpers/cli.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const FAKE_AGENT = join(ROOT, 'test', 'fixtures', 'fake-agent.mjs');
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], {
    cwd,
    env: process.env,
  })
    .toString()
    .trim();

const lines = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}`).join('\n') + '\n';

describe('GET /api/sessions/{id}/changes, from git in the sandbox', () => {
  const root = tempDir('sessiondesk-changes-');
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let stranger: Awaited<ReturnType<typeof seedWorkspace>>;
  const previousGitConfig = process.env.GIT_CONFIG_GLOBAL;

  beforeAll(async () => {
    // The base: a bare repository reachable as https://git.example.test/acme/widgets.
    const seed = join(root, 'seed');
    mkdirSync(seed);
    git(seed, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(seed, 'NOTES.md'), '# Widgets\n');
    writeFileSync(join(seed, 'keep.txt'), lines(10, 'keep'));
    writeFileSync(join(seed, 'moved.txt'), lines(40, 'moved'));
    writeFileSync(join(seed, 'gone.txt'), lines(3, 'gone'));
    writeFileSync(join(seed, 'logo.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
    writeFileSync(join(seed, '.gitignore'), 'ignored/\n');
    git(seed, 'add', '.');
    git(seed, 'commit', '--quiet', '-m', 'Initial commit');
    mkdirSync(join(root, 'repos', 'acme'), { recursive: true });
    git(root, 'clone', '--quiet', '--bare', seed, join(root, 'repos', 'acme', 'widgets.git'));
    const gitConfig = join(root, 'gitconfig');
    writeFileSync(
      gitConfig,
      `[url "file://${join(root, 'repos')}/"]\n\tinsteadOf = https://git.example.test/\n`,
    );
    process.env.GIT_CONFIG_GLOBAL = gitConfig;

    server = await startTestServer({ agentCommand: [process.execPath, FAKE_AGENT, '{prompt}', '{model}'] });
    owner = await seedWorkspace(server);
    stranger = await seedWorkspace(server, 'stranger');
  });
  afterAll(async () => {
    await server.dispose();
    if (previousGitConfig === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = previousGitConfig;
    rmSync(root, { recursive: true, force: true });
  });

  /** A session whose agent cloned the repository, committed to NOTES.md and finished. */
  async function finishedSession(prompt = 'Document the widgets', body: Record<string, unknown> = {}) {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: prompt,
      repoUrl: 'https://git.example.test/acme/widgets',
      ...body,
    });
    await expect
      .poll(
        async () => {
          const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`);
          return FullSessionResponseSchema.parse(await response.json()).session.messages.at(-1)?.type;
        },
        { timeout: 20_000 },
      )
      .toBe('result');
    return { id: created.id, sandbox: sandboxPath(server.sandboxRoot, created.id) };
  }

  async function changesOf(id: string) {
    const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}/changes`);
    expect(response.status).toBe(200);
    return SessionChangesResponseSchema.parse(await response.json());
  }

  async function availableChanges(id: string): Promise<SessionChanges> {
    const changes = await changesOf(id);
    if (!changes.available) throw new Error(`no changes: ${changes.message}`);
    return changes;
  }

  const file = (changes: SessionChanges, path: string): ChangedFile => {
    const found = changes.files.find((f) => f.path === path);
    if (!found) throw new Error(`${path} is not among ${changes.files.map((f) => f.path).join(', ')}`);
    return found;
  };

  it('reports committed, staged, unstaged, untracked, deleted, renamed, binary and symlinked changes', async () => {
    const { id, sandbox } = await finishedSession();
    // Committed by the test on the agent's branch, beyond the agent's own commit to NOTES.md.
    writeFileSync(join(sandbox, 'keep.txt'), lines(10, 'keep').replace('keep line 5\n', 'kept line five\n'));
    git(sandbox, 'commit', '--quiet', '-am', 'Reword line 5');
    // Uncommitted: a rename (staged), a deletion, an unstaged edit, a staged new file,
    // an untracked file, a binary edit, a symbolic link out of the sandbox, an ignored file.
    git(sandbox, 'mv', 'moved.txt', 'renamed.txt');
    unlinkSync(join(sandbox, 'gone.txt'));
    writeFileSync(
      join(sandbox, 'keep.txt'),
      lines(10, 'keep').replace('keep line 5\n', 'kept line five\n') + 'tail\n',
    );
    writeFileSync(join(sandbox, 'staged.txt'), 'staged\n');
    git(sandbox, 'add', 'staged.txt');
    mkdirSync(join(sandbox, 'docs'));
    writeFileSync(join(sandbox, 'docs', 'new file.md'), '# New\n\nHello\n');
    writeFileSync(join(sandbox, 'logo.bin'), Buffer.from([0, 9, 9, 9, 0, 255, 0]));
    symlinkSync('/etc/passwd', join(sandbox, 'passwd-link'));
    mkdirSync(join(sandbox, 'ignored'));
    writeFileSync(join(sandbox, 'ignored', 'cache.txt'), 'not a change\n');
    const indexBefore = readFileSync(join(sandbox, '.git', 'index'));
    const statusBefore = git(sandbox, 'status', '--porcelain');

    const changes = await availableChanges(id);
    const base = git(sandbox, 'rev-parse', 'origin/main');
    expect(changes.base).toEqual({ branch: 'main', ref: 'refs/remotes/origin/main', mergeBase: base });
    expect(changes.head).toEqual({
      branch: git(sandbox, 'symbolic-ref', '--short', 'HEAD'),
      commit: git(sandbox, 'rev-parse', 'HEAD'),
    });
    expect(changes.files.map((f) => [f.path, f.status]).sort()).toEqual(
      [
        ['NOTES.md', 'modified'],
        ['docs/new file.md', 'added'],
        ['gone.txt', 'deleted'],
        ['keep.txt', 'modified'],
        ['logo.bin', 'modified'],
        ['passwd-link', 'added'],
        ['renamed.txt', 'renamed'],
        ['staged.txt', 'added'],
      ].sort(),
    );
    expect(file(changes, 'NOTES.md')).toMatchObject({ additions: 2, deletions: 0, binary: false });
    expect(file(changes, 'NOTES.md').patch).toContain('+Document the widgets\n');
    expect(file(changes, 'keep.txt')).toMatchObject({ additions: 2, deletions: 1, truncated: false });
    expect(file(changes, 'keep.txt').patch).toMatch(/^diff --git a\/keep\.txt b\/keep\.txt\n/u);
    expect(file(changes, 'keep.txt').patch).toContain('-keep line 5\n+kept line five\n');
    expect(file(changes, 'gone.txt')).toMatchObject({ additions: 0, deletions: 3 });
    expect(file(changes, 'renamed.txt')).toMatchObject({ oldPath: 'moved.txt', additions: 0, deletions: 0 });
    expect(file(changes, 'docs/new file.md')).toMatchObject({ status: 'added', additions: 3, kind: 'file' });
    expect(file(changes, 'docs/new file.md').patch).toContain('+Hello\n');
    expect(file(changes, 'staged.txt')).toMatchObject({ additions: 1 });
    expect(file(changes, 'logo.bin')).toMatchObject({ binary: true, additions: 0, deletions: 0 });
    expect(file(changes, 'logo.bin').patch).toContain('Binary files a/logo.bin and b/logo.bin differ');
    // A link is shown as git keeps it: its target, never the file it points to.
    const link = file(changes, 'passwd-link');
    expect(link).toMatchObject({ kind: 'symlink', additions: 1 });
    expect(link.patch).toContain('+/etc/passwd\n');
    expect(link.patch).not.toContain('root:');
    expect(changes.totals).toEqual({
      files: 8,
      additions: changes.files.reduce((n, f) => n + f.additions, 0),
      deletions: changes.files.reduce((n, f) => n + f.deletions, 0),
    });
    expect(changes.truncated).toBe(false);

    // Reading changes wrote nothing to the repository: same index, same status.
    expect(readFileSync(join(sandbox, '.git', 'index')).equals(indexBefore)).toBe(true);
    expect(git(sandbox, 'status', '--porcelain')).toBe(statusBefore);
  });

  it('caps big patches per file and in all, with exact counts and a marker', async () => {
    const { id, sandbox } = await finishedSession('Generate data');
    const bigLines = 20_000; // about 490 KiB: over the per-file cap.
    writeFileSync(join(sandbox, 'big.txt'), lines(bigLines, 'big'));
    // Ten files of about 300 KiB: their kept patches overrun the 2 MiB cap on all patches.
    for (let i = 0; i < 10; i += 1) writeFileSync(join(sandbox, `data-${i}.txt`), lines(12_000, `data ${i}`));

    const changes = await availableChanges(id);
    expect(changes.truncated).toBe(true);
    expect(changes.totals.files).toBe(12);
    expect(changes.totals.additions).toBe(2 + bigLines + 10 * 12_000);
    const big = file(changes, 'big.txt');
    expect(big).toMatchObject({ additions: bigLines, truncated: true });
    expect(Buffer.byteLength(big.patch ?? '')).toBeLessThanOrEqual(CHANGES_LIMITS.filePatchBytes);
    expect(Buffer.byteLength(big.patch ?? '')).toBeGreaterThan(CHANGES_LIMITS.filePatchBytes - 100);
    expect(big.patch).toMatch(/\n$/u); // cut at a line's end
    const patchBytes = changes.files.reduce((n, f) => n + Buffer.byteLength(f.patch ?? ''), 0);
    expect(patchBytes).toBeLessThanOrEqual(CHANGES_LIMITS.totalPatchBytes);
    const withoutPatch = changes.files.filter((f) => f.patch === undefined);
    expect(withoutPatch.length).toBeGreaterThan(0);
    for (const f of withoutPatch) expect(f).toMatchObject({ truncated: true, additions: 12_000 });
    // NOTES.md, small, comes first (git sorts by path) and is whole.
    expect(file(changes, 'NOTES.md')).toMatchObject({ truncated: false, additions: 2 });
  });

  it("never runs the repository's filter drivers or external diff", async () => {
    const { id, sandbox } = await finishedSession('Configure git');
    const marker = join(root, 'filter-ran');
    git(sandbox, 'config', 'filter.evil.clean', `touch ${marker}; cat`);
    git(sandbox, 'config', 'filter.evil.process', `touch ${marker}`);
    git(sandbox, 'config', 'diff.external', `touch ${marker}`);
    git(sandbox, 'config', 'core.fsmonitor', `touch ${marker}`);
    writeFileSync(join(sandbox, '.gitattributes'), '*.txt filter=evil\n');
    writeFileSync(join(sandbox, 'keep.txt'), 'changed\n');

    const changes = await availableChanges(id);
    expect(file(changes, 'keep.txt')).toMatchObject({ additions: 1, deletions: 10 });
    expect(existsSync(marker)).toBe(false);
  });

  it('never runs what a nested repository configures for itself: its filters, fsmonitor or diff', async () => {
    const { id, sandbox } = await finishedSession('Vendor a library');
    const marker = join(root, 'nested-config-ran');
    /** A repository inside the sandbox whose own .git/config runs a program on its files. */
    const nestedRepository = (name: string) => {
      const nested = join(sandbox, name);
      mkdirSync(nested);
      git(nested, 'init', '--quiet', '--initial-branch=main');
      writeFileSync(join(nested, '.gitattributes'), '* filter=nested diff=nested\n');
      writeFileSync(join(nested, 'lib.txt'), 'one\n');
      git(nested, 'add', '.');
      git(nested, 'commit', '--quiet', '-m', 'Vendored');
      git(nested, 'config', 'filter.nested.clean', `touch ${marker}; cat`);
      git(nested, 'config', 'filter.nested.process', `touch ${marker}`);
      git(nested, 'config', 'diff.nested.command', `touch ${marker}`);
      git(nested, 'config', 'diff.external', `touch ${marker}`);
      git(nested, 'config', 'core.fsmonitor', `touch ${marker}`);
      // Changed in its work tree: git would look inside to say whether it is modified.
      writeFileSync(join(nested, 'lib.txt'), 'two\n');
    };
    // One committed as a submodule (a gitlink), one left untracked in the sandbox.
    nestedRepository('vendor');
    git(sandbox, 'add', 'vendor');
    git(sandbox, 'commit', '--quiet', '-m', 'Vendor the library');
    nestedRepository('untracked-vendor');

    const changes = await availableChanges(id);
    expect(file(changes, 'vendor')).toMatchObject({ status: 'added', kind: 'submodule' });
    expect(existsSync(marker)).toBe(false);
  });

  it('shows an edit of the same size made in the second its file was staged (racy git)', async () => {
    const { id, sandbox } = await finishedSession('Stage, then edit at once');
    const file = join(sandbox, 'keep.txt');
    const staged = lines(10, 'keep');
    const edited = staged.replace('keep line 1\n', 'KEEP line 1\n');
    const second = (ms: number) => Math.floor(ms / 1000);
    // Staged and edited within one second, as a fast agent does; tried again should a second
    // begin between the two.
    let at = -1;
    for (let tries = 0; tries < 20 && at < 0; tries += 1) {
      writeFileSync(file, staged);
      git(sandbox, 'add', 'keep.txt');
      writeFileSync(file, edited);
      const index = second(statSync(join(sandbox, '.git', 'index')).mtimeMs);
      if (second(statSync(file).ctimeMs) === index) at = index;
    }
    expect(at).toBeGreaterThan(0);
    // Read a second later: git itself still sees the edit, and so must the comparison.
    await expect.poll(() => second(Date.now()), { timeout: 3_000 }).toBeGreaterThan(at);
    expect(git(sandbox, 'diff', '--stat', 'HEAD', '--', 'keep.txt')).toContain('keep.txt');
    const changes = await changesOf(id);
    if (!changes.available) throw new Error(changes.message);
    expect(changes.files.find((f) => f.path === 'keep.txt')).toMatchObject({
      status: 'modified',
      additions: 1,
      deletions: 1,
    });
  });

  it('answers available: false, saying why, without a repository, a sandbox or a clone', async () => {
    const demoLike = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'No repository here',
    });
    expect(await changesOf(demoLike.id)).toEqual({
      available: false,
      reason: 'no_repository',
      message: 'This session has no repository, so there are no changes to show.',
    });

    const gone = await finishedSession('Then the sandbox is removed');
    rmSync(gone.sandbox, { recursive: true, force: true });
    expect(await changesOf(gone.id)).toMatchObject({ available: false, reason: 'no_sandbox' });

    // A link put where the sandbox was is not followed.
    const linked = await finishedSession('Then the sandbox is a link');
    renameSync(linked.sandbox, `${linked.sandbox}-moved`);
    symlinkSync(`${linked.sandbox}-moved`, linked.sandbox);
    expect(await changesOf(linked.id)).toMatchObject({ available: false, reason: 'no_sandbox' });

    // The clone failed (no such branch): the sandbox is an empty folder, and git must not
    // find a repository above it.
    const failed = await finishedSession('Clone a missing branch', { baseBranch: 'no-such-branch' });
    expect(existsSync(failed.sandbox)).toBe(true);
    expect(await changesOf(failed.id)).toMatchObject({ available: false, reason: 'not_a_repository' });

    const detached = await finishedSession('Then the base goes away');
    git(detached.sandbox, 'update-ref', '-d', 'refs/remotes/origin/main');
    git(detached.sandbox, 'branch', '-D', 'main');
    expect(await changesOf(detached.id)).toMatchObject({
      available: false,
      reason: 'no_base',
      message: "The base branch main is not in the sandbox's repository.",
    });
  });

  it('follows the access rules of GET /api/sessions/{id}', async () => {
    const { id } = await finishedSession('Check access');
    const path = `/api/sessions/${id}/changes`;
    // The API key and the cookie both work.
    expect((await withKey(server, owner.apiKey, 'GET', path)).status).toBe(200);
    const byCookie = await asUser(server, owner.user.cookie, 'GET', path);
    expect(byCookie.status).toBe(200);
    expect(await byCookie.json()).toMatchObject({ available: true });
    // Another workspace's key or member: 403, as for the session itself.
    for (const response of [
      await withKey(server, stranger.apiKey, 'GET', path),
      await asUser(server, stranger.user.cookie, 'GET', path),
      await withKey(server, owner.apiKey, 'GET', `${path}?organizationId=${stranger.organizationId}`),
    ]) {
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ error: { code: 'forbidden' } });
    }
    // No credentials: 401; unknown or malformed ids: 404.
    expect((await fetch(`${server.url}${path}`)).status).toBe(401);
    for (const other of ['ses_doesnotexist0000000000', '..%2F..%2Fetc', 'x'.repeat(99)]) {
      const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${other}/changes`);
      expect(response.status, other).toBe(404);
      expect(await response.json()).toMatchObject({
        error: { code: 'not_found', message: 'Session not found' },
      });
    }
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    };
    const route = doc.paths['/api/sessions/{sessionId}/changes']?.get;
    expect(Object.keys(route?.responses ?? {}).sort()).toEqual(['200', '401', '403', '404', '429', '500']);
  });
});
