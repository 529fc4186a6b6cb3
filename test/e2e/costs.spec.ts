import { unpricedModelOf } from '../helpers/prices.js';
import { chooseAgent, expect, serveWithRecordedClis, signIn, test } from './fixtures.js';

/** A model Codex offers that the price table has no price for. */
const UNPRICED = unpricedModelOf('codex');

test('a Codex run on a model without a price: its session and the week’s cost card say the cost is unknown, and why', async ({
  page,
}) => {
  const { server, data, stop } = await serveWithRecordedClis();
  try {
    await signIn(page, server.url, data.email, data.password);
    await chooseAgent(page, server.url, /^Codex \(version/);

    await page.getByRole('link', { name: 'New session' }).click();
    // Codex reports tokens and no cost, and the price table has no price for this model.
    await page.getByLabel('Model').selectOption(UNPRICED);
    await page.getByLabel('Prompt', { exact: true }).fill('Say hello. scenario:plain-answer');
    await page.getByRole('button', { name: 'Start session' }).click();
    await expect(page.getByText('Hello from the scripted model.').first()).toBeVisible();
    const usage = page.getByRole('definition').filter({ hasText: / in · .* out/u });
    await expect(usage).toContainText(`cost unknown: no price for ${UNPRICED}`, { timeout: 40_000 });
    await expect(usage).not.toContainText('$');

    await page.getByRole('link', { name: 'Sessions' }).first().click();
    const cost = page.getByRole('region', { name: 'Workspace stats' }).locator('.stat', {
      hasText: 'Agent cost this week',
    });
    await expect(cost.locator('.stat-value')).toHaveText(/^Unknown/u);
    await expect(cost.getByRole('listitem')).toHaveText([
      `cost of 1 Codex session unknown: no price for ${UNPRICED}`,
    ]);
  } finally {
    await stop();
  }
});
