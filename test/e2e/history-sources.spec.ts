// Settings › History in a real browser: an owner adds a CLI folder, the server follows it, and
// the source can be paused and removed (the folder's files stay).
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runInShell, startServe } from '../helpers/cli.js';
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
    await expect(page.getByRole('alert')).toHaveText(
      '"relative/folder" is not a full path: name the folder from the top, such as ' +
        `${homedir()}/.gemini, or from your home folder, such as ~/.gemini.`,
    );

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

test("a folder that is not the program's is refused, saying whose it looks like", async ({
  page,
  seeded,
}) => {
  const { server, data } = seeded;
  const root = mkdtempSync(join(tmpdir(), 'e2e-history-root-'));
  try {
    cpSync(join(ROOT, 'test', 'fixtures', 'history', 'codex', '0.169.0', 'plain-answer'), root, {
      recursive: true,
    });
    await signIn(page, server.url, data.email, data.password);
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByLabel('Program').selectOption('claude-code');
    await page.getByLabel('Folder').fill(root);
    await page.getByRole('button', { name: 'Add source' }).click();
    await expect(page.getByRole('alert')).toHaveText(
      `${root} has no Claude Code conversations: Claude Code keeps them in ~/.claude/projects/<project>/<id>.jsonl; ` +
        'this looks like a Codex folder (~/.codex/sessions).',
    );
    await expect(page.getByRole('heading', { name: 'No history sources' })).toBeVisible();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the command the page shows imports into this workspace, run as shown', async ({ page, seeded }) => {
  const { server, data } = seeded;
  const home = mkdtempSync(join(tmpdir(), 'e2e-history-home-'));
  const config = mkdtempSync(join(tmpdir(), 'e2e-history-config-'));
  try {
    cpSync(
      join(ROOT, 'test', 'fixtures', 'history', 'gemini', '0.61.0', 'write-todos'),
      join(home, '.gemini'),
      {
        recursive: true,
      },
    );
    await signIn(page, server.url, data.email, data.password);
    await page.getByRole('link', { name: 'History' }).click();
    const empty = page.getByRole('heading', { name: 'No history sources' }).locator('..');
    const shown = (await empty.locator('code').textContent()) ?? '';
    // The server's data directory is not the default one: the command has to name it.
    expect(shown).toBe(
      `sessiondesk history import --workspace ${data.organizationId} --data-dir ${server.dataDir}`,
    );
    // In a terminal whose default data directory is elsewhere, with Gemini CLI's folder at home.
    const ran = await runInShell(shown, { HOME: home, XDG_CONFIG_HOME: config, SESSIONDESK_DATA_DIR: '' });
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^gemini: 1 sessions \(1 new, 0 updated\), \d+ messages$/mu);
    const row = page.getByRole('row', { name: new RegExp(join(home, '.gemini')) });
    await expect(row).toContainText('Gemini CLI', { timeout: 15_000 });
    await expect(row.getByRole('cell').nth(2)).toHaveText('1');
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  }
});
