import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { ROOT, startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { chooseAgent, expect, screenshotsInBothThemes, signIn, test } from './fixtures.js';

const FAKE_AGENT = join(ROOT, 'test', 'fixtures', 'fake-agent.mjs');
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], { cwd });

/** A bare repository with a main branch, reachable as https://git.example.test/acme/widgets. */
function widgetsRepository(root: string): string {
  const seed = join(root, 'seed');
  mkdirSync(join(seed, 'src'), { recursive: true });
  writeFileSync(join(seed, 'NOTES.md'), '# Widgets\n');
  writeFileSync(
    join(seed, 'src', 'widget.ts'),
    'export function widget(name: string) {\n  return `widget ${name}`;\n}\n\nexport const SIZE = 3;\n',
  );
  writeFileSync(join(seed, 'OLD.md'), 'Old notes\n');
  git(root, 'init', '--quiet', '--initial-branch=main', seed);
  git(seed, 'add', '.');
  git(seed, 'commit', '--quiet', '-m', 'Initial commit');
  mkdirSync(join(root, 'repos', 'acme'), { recursive: true });
  git(root, 'clone', '--quiet', '--bare', seed, join(root, 'repos', 'acme', 'widgets.git'));
  const config = join(root, 'gitconfig');
  writeFileSync(config, `[url "file://${join(root, 'repos')}/"]\n\tinsteadOf = https://git.example.test/\n`);
  return config;
}

test("a session's Changes: its files with their counts, and a diff", async ({ page }) => {
  const root = tempDir('sessiondesk-e2e-git-');
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn'], {
    GIT_CONFIG_GLOBAL: widgetsRepository(root),
    SESSIONDESK_AGENT_COMMAND: JSON.stringify([process.execPath, FAKE_AGENT, '{prompt}', '{model}']),
  });
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.goto(`${server.url}/new`);
    await page.getByLabel('Prompt', { exact: true }).fill('Add a changelog');
    await page.getByLabel('Repository URL').fill('https://git.example.test/acme/widgets');
    await page.getByRole('button', { name: 'Start session' }).click();
    await expect(page.getByText('Done: Add a changelog')).toBeVisible({ timeout: 20_000 });
    const changes = page.getByRole('region', { name: 'Changes' });
    await expect(changes).toContainText('1 file');
    await expect(changes).toContainText('+2 −0');

    // Work the agent left uncommitted shows too, after a refresh.
    const sessionId = new URL(page.url()).pathname.split('/').pop() ?? '';
    const sandbox = sandboxPath(defaultSandboxRoot(dataDir), sessionId);
    writeFileSync(
      join(sandbox, 'src', 'widget.ts'),
      'export function widget(name: string, size = SIZE) {\n  return `widget ${name} (${size})`;\n}\n\nexport const SIZE = 4;\n',
    );
    writeFileSync(join(sandbox, 'CHANGELOG.md'), '# Changelog\n\n- Widgets have a size.\n');
    unlinkSync(join(sandbox, 'OLD.md'));
    // About 300 KiB of new lines: over the cap on one file's diff.
    mkdirSync(join(sandbox, 'fixtures'));
    const rows = Array.from({ length: 12_000 }, (_, i) => `row ${i + 1},widget ${i % 7},${i * 3}`);
    writeFileSync(join(sandbox, 'fixtures', 'data.csv'), `${rows.join('\n')}\n`);
    await changes.getByRole('button', { name: 'Refresh' }).click();
    await expect(changes).toContainText('5 files');

    await changes.getByRole('button', { name: 'Show files' }).click();
    const files = changes.getByRole('list', { name: 'Changed files' });
    await expect(files.getByRole('listitem')).toHaveText([
      /CHANGELOG\.md.*\+3 −0/u,
      /NOTES\.md.*\+2 −0/u,
      /OLD\.md.*\+0 −1/u,
      /fixtures\/data\.csv.*truncated.*\+12,000 −0/u,
      /src\/widget\.ts.*\+3 −3/u,
    ]);
    await files.getByText('src/widget.ts').click();
    const diff = changes.getByLabel('Diff of src/widget.ts');
    await expect(diff).toContainText('+export const SIZE = 4;');
    await expect(diff.locator('.patch-del').first()).toHaveText(
      /-export function widget\(name: string\) \{/u,
    );
    await files.getByText('CHANGELOG.md').click();
    await expect(changes.getByLabel('Diff of CHANGELOG.md')).toContainText('+- Widgets have a size.');
    // A cut diff says so, above and below it.
    await expect(changes.getByRole('note').first()).toContainText('Some diffs are cut or left out');
    await files.getByText('fixtures/data.csv').click();
    await expect(changes.getByLabel('Diff of fixtures/data.csv')).toContainText('+row 1,widget 0,0');
    await expect(changes.getByText(/Diff cut at 256 KiB/u)).toBeVisible();
    await files.getByText('fixtures/data.csv').click();
    await expect(changes.getByLabel('Diff of fixtures/data.csv')).toHaveCount(0);

    await screenshotsInBothThemes(page, 'changes');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
});

test('a session without a repository says there are no changes to show', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.goto(`${seeded.server.url}/sessions/${seeded.data.transcriptSessionId}`);
  // The seeded session names a repository but never had a sandbox.
  await expect(page.getByRole('region', { name: 'Changes' })).toContainText(
    "The session's sandbox does not exist",
  );
  // An agent of the workspace's own choosing (the demo agent works in its sample project, with a
  // repository or without), started without a repository.
  await writeNamedCommands(seeded.server.dataDir, {
    fake: [process.execPath, FAKE_AGENT, '{prompt}', '{model}'],
  });
  await chooseAgent(page, seeded.server.url, /A local agent command/);
  await page.goto(`${seeded.server.url}/new`);
  await page.getByLabel('Prompt', { exact: true }).fill('Just talk');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('region', { name: 'Changes' })).toContainText(
    'This session has no repository, so there are no changes to show.',
  );
});
