import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../helpers/cli.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('a Codex run on a model without a price: its session and the week’s cost card say the cost is unknown, and why', async ({
  page,
}) => {
  const bin = installRecordedClis(mkdtempSync(join(tmpdir(), 'e2e-clis-')));
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn'], {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
  });
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.goto(`${server.url}/settings/agent`);
    await page.getByLabel(/Codex/).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();

    await page.getByRole('link', { name: 'New session' }).click();
    // Codex reports tokens and no cost, and the price table has no price for gpt-5.5.
    await page.getByLabel('Model').selectOption('gpt-5.5');
    await page.getByLabel('Prompt', { exact: true }).fill('Say hello. scenario:plain-answer');
    await page.getByRole('button', { name: 'Start session' }).click();
    await expect(page.getByText('Hello from the scripted model.').first()).toBeVisible();
    const usage = page.getByRole('definition').filter({ hasText: / in · .* out/u });
    await expect(usage).toContainText('cost unknown: no price for gpt-5.5', { timeout: 40_000 });
    await expect(usage).not.toContainText('$');

    await page.getByRole('link', { name: 'Sessions' }).first().click();
    const cost = page.getByRole('region', { name: 'Workspace stats' }).locator('.stat', {
      hasText: 'Agent cost this week',
    });
    await expect(cost.locator('.stat-value')).toHaveText(/^Unknown/u);
    await expect(cost.getByRole('listitem')).toHaveText([
      'cost of 1 Codex session unknown: no price for gpt-5.5',
    ]);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bin, { recursive: true, force: true });
  }
});
