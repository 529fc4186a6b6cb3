// Settings › Agent as a person meets it: the agents installed here first, by their names, the
// others folded under "Not installed" with their install commands; the real Claude Code chosen,
// and checked with the Check button: each step shown, passing against its scripted model server
// and failing, with the endpoint it tried and what to do, against a closed port.
import { mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { seedStorage } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { agentCliTool, bubblewrapTool } from '../helpers/tools.js';
import { newPlace, removePlace, seedPlace, servePlace } from './backend.js';
import { expect, screenshotsInBothThemes, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

const claude = agentCliTool('claude');
const SCRIPT = [{ match: 'Reply with OK', turns: [{ blocks: [{ type: 'text', text: 'OK' }] }] }];

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server whose agents find the real Claude Code, talking to its scripted model (or `baseUrl`). */
async function serveWithClaude(baseUrl?: string) {
  const root = tempDir('sessiondesk-e2e-check-');
  const home = join(root, 'home');
  mkdirSync(home);
  const cli = await realCli('claude-code', SCRIPT, home);
  const place = await newPlace();
  const data = await seedPlace(place, (storage) => seedStorage(storage));
  const server = await servePlace(place, ['--log-level', 'warn'], {
    ...cli.env,
    ...(baseUrl ? { ANTHROPIC_BASE_URL: baseUrl } : {}),
    // Only Claude Code: the other agents are not on this server's PATH.
    PATH: `${process.env.PATH ?? ''}`,
    SESSIONDESK_CLAUDE_BIN: cli.bin,
    SESSIONDESK_AGENT_ENV: cli.names.join(','),
  });
  return {
    server,
    data,
    async stop() {
      await server.stop();
      await cli.close();
      rmSync(defaultSandboxRoot(place.dataDir), { recursive: true, force: true });
      removePlace(place);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

test('Settings › Agent: installed agents first, the others folded with their install commands; Check passes', async ({
  page,
}) => {
  requireTools(claude, bubblewrapTool());
  test.setTimeout(120_000);
  const { server, data, stop } = await serveWithClaude();
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agent' }).click();
    const form = page.getByRole('group', { name: 'Agent' });
    // Installed here, by its name and version; the others are folded away.
    const claudeChoice = form.getByRole('radio', { name: /^Claude Code \(version 2\.1\.\d+, / });
    await expect(claudeChoice).toBeEnabled();
    const missing = page.getByRole('group', { name: 'Agent' }).locator('details.missing-agents');
    const summary = missing.locator('summary');
    await expect(summary).toHaveText(/^Not installed \(\d+\)$/u);
    const notInstalled = page.getByRole('list', { name: 'Agents not installed' });
    await expect(notInstalled).toBeHidden();
    await expect(form.getByRole('radio', { name: /OpenCode/ })).toHaveCount(0);
    await summary.click();
    await expect(notInstalled).toBeVisible();
    await expect(notInstalled.getByRole('listitem').filter({ hasText: 'OpenCode' })).toContainText(
      'npm install -g opencode-ai',
    );
    await expect(
      notInstalled
        .getByRole('listitem')
        .filter({ hasText: /^Codex/ })
        .first(),
    ).toContainText('npm install -g @openai/codex');
    // Installed ones come before the folded list, and the demo agent before them.
    const order = await form.locator('label.checkbox, details').allInnerTexts();
    const at = (text: RegExp) => order.findIndex((t) => text.test(t));
    expect(at(/^Demo agent/u)).toBeLessThan(at(/^Claude Code/u));
    expect(at(/^Claude Code/u)).toBeLessThan(at(/^Not installed/u));

    await claudeChoice.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();

    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await expect(page.getByRole('button', { name: 'Checking…' })).toBeDisabled();
    const steps = page.getByRole('list', { name: 'Check steps' });
    await expect(steps).toBeVisible({ timeout: 35_000 });
    await expect(page.getByText('Claude Code is ready: every step passed.')).toBeVisible();
    await expect(steps.getByRole('listitem', { name: 'Program' })).toContainText('passed');
    await expect(steps.getByRole('listitem', { name: 'Program' })).toContainText(/version 2\.1\.\d+/u);
    await expect(steps.getByRole('listitem', { name: 'Credentials' })).toContainText(
      'ANTHROPIC_API_KEY (environment)',
    );
    await expect(steps.getByRole('listitem', { name: 'Test prompt' })).toContainText(
      /Claude Code answered in [\d.]+ s: "OK"/u,
    );
    await summary.scrollIntoViewIfNeeded();
    await screenshotsInBothThemes(page, 'settings-agent-not-installed');
    await summary.click();
    await steps.scrollIntoViewIfNeeded();
    await screenshotsInBothThemes(page, 'settings-agent-check-passed');
  } finally {
    await stop();
  }
});

test('Check against a closed port: the failed step names the endpoint and what to do', async ({ page }) => {
  requireTools(claude, bubblewrapTool());
  test.setTimeout(120_000);
  const endpoint = `http://127.0.0.1:${await closedPort()}`;
  const { server, data, stop } = await serveWithClaude(endpoint);
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.goto(`${server.url}/settings/agent`);
    await page.getByRole('radio', { name: /^Claude Code \(version/ }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await expect(page.getByText('Claude Code is not ready: see the failed step below.')).toBeVisible({
      timeout: 35_000,
    });
    const prompt = page
      .getByRole('list', { name: 'Check steps' })
      .getByRole('listitem', { name: 'Test prompt' });
    await expect(prompt).toContainText('failed');
    await expect(prompt).toContainText(
      `Claude Code cannot reach its model API at ${endpoint} (ANTHROPIC_BASE_URL)`,
    );
    await expect(prompt).toContainText(`Endpoint: ${endpoint}`);
    await expect(prompt).toContainText("Fix: Check the model API's address (ANTHROPIC_BASE_URL)");
    await screenshotsInBothThemes(page, 'settings-agent-check-failed');
  } finally {
    await stop();
  }
});
