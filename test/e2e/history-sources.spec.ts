// Settings › History in a real browser: an owner adds a CLI folder, the server follows it, and
// the source can be paused and removed (the folder's files stay).
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('an owner adds, pauses and removes a history source in Settings', async ({ page, seeded }) => {
  const { server, data } = seeded;
  const root = mkdtempSync(join(tmpdir(), 'e2e-history-root-'));
  try {
    cpSync(join(ROOT, 'test', 'fixtures', 'history', 'gemini', '0.61.0', 'write-todos'), root, {
      recursive: true,
    });
    const before = readdirSync(join(root, 'tmp', 'repo', 'chats'));
    await signIn(page, server.url, data.email, data.password);
    await page.getByRole('link', { name: 'History' }).click();
    await expect(page.getByRole('heading', { name: 'History', level: 1 })).toBeVisible();
    await expect(page.getByRole('heading', { name: 'No history sources' })).toBeVisible();

    await page.getByLabel('Program').selectOption('gemini');
    await page.getByLabel('Folder').fill('relative/folder');
    await page.getByRole('button', { name: 'Add source' }).click();
    await expect(page.getByRole('alert')).toContainText('absolute');

    await page.getByLabel('Folder').fill(root);
    await page.getByRole('button', { name: 'Add source' }).click();
    const row = page.getByRole('row', { name: new RegExp(root) });
    await expect(row).toContainText('Gemini CLI');
    // The server imports it at its next scan; the page refreshes the counts.
    await expect(row.getByRole('cell').nth(2)).toHaveText('1', { timeout: 15_000 });

    await row.getByRole('button', { name: /Pause/ }).click();
    await expect(row).toContainText('Paused');
    await row.getByRole('button', { name: /Resume/ }).click();
    await expect(row).not.toContainText('Paused');

    await row.getByRole('button', { name: /Remove/ }).click();
    await page.getByRole('button', { name: 'Remove source' }).click();
    await expect(page.getByRole('heading', { name: 'No history sources' })).toBeVisible();
    expect(readdirSync(join(root, 'tmp', 'repo', 'chats'))).toEqual(before);

    // The imported session stays in the list.
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expect(page.getByRole('link', { name: /Track your work/ }).first()).toBeVisible();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("an owner adds a CLI's folder found in its default place with one click", async ({ page }) => {
  const home = mkdtempSync(join(tmpdir(), 'e2e-history-home-'));
  const dataDir = tempDir('sessiondesk-e2e-');
  try {
    cpSync(
      join(ROOT, 'test', 'fixtures', 'history', 'gemini', '0.61.0', 'write-todos'),
      join(home, '.gemini'),
      {
        recursive: true,
      },
    );
    const data = await seedDataDir(dataDir);
    const server = await startServe(dataDir, ['--log-level', 'warn'], { HOME: home });
    try {
      await signIn(page, server.url, data.email, data.password);
      await page.getByRole('link', { name: 'History' }).click();
      const found = page.getByRole('region', { name: 'Found on this machine' });
      await expect(found).toContainText(`Gemini CLI ${join(home, '.gemini')}`);
      await found.getByRole('button', { name: `Add ${join(home, '.gemini')}` }).click();
      const row = page.getByRole('row', { name: new RegExp(join(home, '.gemini')) });
      await expect(row).toContainText('Gemini CLI');
      await expect(found).toBeHidden();
      await expect(row.getByRole('cell').nth(2)).toHaveText('1', { timeout: 15_000 });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
});
