import { chooseAgent, expect, serveWithRecordedClis, signIn, test } from './fixtures.js';

test('a demo session is labelled simulated in the list and on its page', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.keyboard.press('n');
  await page.getByLabel('Prompt', { exact: true }).fill('Tidy the changelog');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { name: 'Tidy the changelog', level: 1 })).toBeVisible();
  await expect(page.getByRole('definition').filter({ hasText: /^Simulated$/u })).toBeVisible();
  await page.getByRole('link', { name: 'Sessions' }).first().click();
  await expect(page.getByRole('link', { name: /Tidy the changelog/ })).toContainText('Simulated');
});

test('choose Claude Code in Settings, run a session and see its agent and cost', async ({ page }) => {
  const { server, data, stop } = await serveWithRecordedClis();
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.goto(`${server.url}/settings/agent`);
    const claude = page.getByLabel(/Claude Code/);
    await expect(page.getByText(/Claude Code \(version 2\.1\.330,/)).toBeVisible();
    await claude.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();

    await page.getByRole('link', { name: 'New session' }).click();
    await expect(page.getByText("Runs with Claude Code, this workspace's agent.")).toBeVisible();
    // No model unless one is chosen: Claude Code's own settings decide.
    const model = page.getByLabel('Model');
    await expect(model).toHaveValue('');
    await expect(model).toHaveAttribute('placeholder', "Claude Code's own default");
    await expect(page.locator('#model-options option[value="opus"]')).toHaveCount(1);
    await page.getByLabel('Prompt', { exact: true }).fill('Remember the colour. scenario:resume');
    await page.getByRole('button', { name: 'Start session' }).click();
    await expect(page.getByText('Remembered: the colour is teal.').first()).toBeVisible();
    await expect(page.getByRole('definition').filter({ hasText: /^Claude Code$/ })).toBeVisible();
    await expect(page.getByRole('definition').filter({ hasText: "Claude Code's own default" })).toBeVisible();
    await expect(page.getByRole('definition').filter({ hasText: '80 in · 9 out · $0.0004' })).toBeVisible();
    await expect(page.getByText('Simulated')).toHaveCount(0);

    // The list's cost card sums what the runs of the past week reported.
    await page.getByRole('link', { name: 'Sessions' }).first().click();
    const cost = page.getByRole('region', { name: 'Workspace stats' }).locator('.stat', {
      hasText: 'Agent cost this week',
    });
    await expect(cost.locator('.stat-value')).toHaveText('$0.0004');
  } finally {
    await stop();
  }
});

test('Codex is offered the models its installed version knows, and none by default', async ({ page }) => {
  const { server, data, stop } = await serveWithRecordedClis();
  try {
    await signIn(page, server.url, data.email, data.password);
    await chooseAgent(page, server.url, /^Codex \(version/);

    await page.getByRole('link', { name: 'New session' }).click();
    await expect(page.getByText("Runs with Codex, this workspace's agent.")).toBeVisible();
    const model = page.getByLabel('Model');
    await expect(model).toHaveJSProperty('tagName', 'SELECT');
    await expect(model).toHaveValue('');
    await expect(model.locator('option').first()).toHaveText("Codex's own default");
    await expect(model.locator('option', { hasText: 'gpt-6.1-sol' })).toHaveCount(1);
    await expect(model.locator('option', { hasText: 'gpt-5.1-codex' })).toHaveCount(0);
    await model.selectOption('gpt-6.1-sol');
    await page.getByLabel('Prompt', { exact: true }).fill('Say hello. scenario:plain-answer');
    await page.getByRole('button', { name: 'Start session' }).click();
    // The model's own line, after the run has ended: the cost's line then names the model too.
    await expect(page.getByRole('definition').filter({ hasText: 'cost unknown' })).toBeVisible();
    await expect(page.getByRole('definition').filter({ hasText: /^gpt-6\.1-sol$/ })).toBeVisible();
  } finally {
    await stop();
  }
});

test('an agent that speaks the Agent Client Protocol is offered in Settings, apart from the same CLI run natively', async ({
  page,
}) => {
  const { server, data, stop } = await serveWithRecordedClis();
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.goto(`${server.url}/settings/agent`);
    const acp = page.getByLabel(/Gemini CLI \(Agent Client Protocol\)/);
    const native = page.getByRole('radio', { name: /^Gemini CLI \(version/ });
    await acp.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();
    // What was saved is the ACP agent, not the CLI's own kind: so the page says after a reload.
    await page.reload();
    await expect(acp).toBeChecked();
    await expect(native).not.toBeChecked();
  } finally {
    await stop();
  }
});
