import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { ROOT, startServe, type ServeProcess } from '../helpers/cli.js';
import { createGitHubFixture, git, type GitHubFixture } from '../helpers/github-fixture.js';
import { seedDataDir, type Seeded } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

const BRANCH_AGENT = join(ROOT, 'test', 'fixtures', 'branch-agent.mjs');

/** `serve` whose agent commits on a branch, with github.com standing in locally and the stand-in gh. */
async function serveWithGitHub(options: { withGh?: boolean } = {}): Promise<{
  server: ServeProcess;
  github: GitHubFixture;
  data: Seeded;
  dispose(): Promise<void>;
}> {
  const github = createGitHubFixture(['acme/widgets']);
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn'], {
    ...github.env(options),
    SESSIONDESK_AGENT_COMMAND: JSON.stringify([process.execPath, BRANCH_AGENT]),
  });
  return {
    server,
    github,
    data,
    async dispose() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(`${dataDir}-sandboxes`, { recursive: true, force: true });
      github.dispose();
    },
  };
}

async function startSession(page: Page, prompt: string): Promise<string> {
  await page.keyboard.press('n');
  await page.getByLabel('Prompt', { exact: true }).fill(prompt);
  await page.getByLabel('Repository URL').fill('https://github.com/acme/widgets');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(prompt);
  return page.url().split('/').pop() ?? '';
}

test('Open pull request pushes the branch, opens it with gh, and Refresh status sees it merged', async ({
  page,
}) => {
  const { server, github, data, dispose } = await serveWithGitHub();
  try {
    await signIn(page, server.url, data.email, data.password);
    await startSession(page, 'Document the widgets');
    const panel = page.getByRole('region', { name: 'Pull request' });
    const openButton = panel.getByRole('button', { name: 'Open pull request' });
    await expect(openButton).toBeEnabled();
    await expect(panel).toContainText('Pushes agent/document-the-widgets-');
    await openButton.click();

    await expect(panel.getByRole('link', { name: '#41 on GitHub' })).toHaveAttribute(
      'href',
      'https://github.com/acme/widgets/pull/41',
    );
    await expect(page.getByRole('definition').filter({ hasText: '#41 Open' })).toBeVisible();
    const create = github.ghCalls().find((argv) => argv[0] === 'pr' && argv[1] === 'create') ?? [];
    expect(create).toContain('--repo=acme/widgets');
    const branch = (create.find((arg) => arg.startsWith('--head=')) ?? '').slice('--head='.length);
    expect(branch).toMatch(/^agent\/document-the-widgets-/);
    expect(
      git(github.root, '--git-dir', github.bare(), 'rev-parse', '--verify', `refs/heads/${branch}`),
    ).toMatch(/^[0-9a-f]{40}$/);

    const pulls = github.pulls();
    Object.assign(pulls['acme/widgets']?.[0] ?? {}, { state: 'MERGED', mergedAt: new Date().toISOString() });
    github.setPulls(pulls);
    await panel.getByRole('button', { name: 'Refresh status' }).click();
    await expect(panel).toContainText(/merged .*(now|second)/);
    await expect(page.getByRole('definition').filter({ hasText: '#41 Merged' })).toBeVisible();
    await expect(panel.getByRole('button', { name: 'Refresh status' })).toBeVisible();
  } finally {
    await dispose();
  }
});

test('the panel says what is missing when gh is not signed in', async ({ page }) => {
  const { server, github, data, dispose } = await serveWithGitHub();
  try {
    github.signOut(true);
    await signIn(page, server.url, data.email, data.password);
    await startSession(page, 'Tidy the notes');
    const panel = page.getByRole('region', { name: 'Pull request' });
    await panel.getByRole('button', { name: 'Open pull request' }).click();
    // gh's words, with the command to type shown as code rather than in backticks.
    const alert = panel.getByRole('alert');
    await expect(alert).toContainText('The GitHub CLI is not signed in to github.com: run gh auth login');
    await expect(alert).not.toContainText('`');
    await expect(alert.locator('code').first()).toHaveText('gh auth login');
    await expect(panel.getByRole('link')).toHaveCount(0);
  } finally {
    await dispose();
  }
});

test('without gh on the server, the panel says so before any click', async ({ page }) => {
  const { server, data, dispose } = await serveWithGitHub({ withGh: false });
  try {
    await signIn(page, server.url, data.email, data.password);
    await startSession(page, 'Tidy the changelog');
    const panel = page.getByRole('region', { name: 'Pull request' });
    await expect(panel).toContainText("GitHub CLI (gh) was not found on the server's PATH");
    await expect(panel.locator('code', { hasText: 'gh auth login' })).toBeVisible();
    await expect(panel).not.toContainText('`');
    await expect(panel.getByRole('button', { name: 'Open pull request' })).toBeDisabled();
  } finally {
    await dispose();
  }
});
