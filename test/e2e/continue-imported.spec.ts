// Continuing a session imported from Claude Code, in a real browser: the follow-up box offers
// the original folder (after a confirmation) or a fresh sandbox, and the real Claude Code CLI
// (against the scripted model server) resumes the conversation, which goes on in the transcript.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { runProgram } from '../helpers/agent-cli.js';
import { claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { startServe } from '../helpers/cli.js';
import { dataDirImporting } from '../helpers/imported.js';
import { tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';
import { expect, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

const claude = agentCliTool('claude');
const bin = claude.path;

const SCRIPT = [
  {
    match: 'CONTINUE-ME',
    turns: ['Noted: the colour is teal.', 'Answered in your folder: teal.'].map((text) => ({
      blocks: [{ type: 'text' as const, text }],
    })),
  },
];

/** The variables that keep Claude Code on the scripted server and quiet. */
const QUIET = [
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_AUTOUPDATER',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
];

test('an imported session continues in its own folder after a confirmation', async ({ page }) => {
  requireTools(claude);
  test.setTimeout(180_000);
  const root = tempDir('sessiondesk-e2e-continue-');
  const model = await startScriptedAnthropicServer(SCRIPT);
  const stops: (() => Promise<unknown>)[] = [() => model.close()];
  try {
    const home = join(root, 'home');
    const widgets = join(root, 'widgets');
    const scratch = join(root, 'scratch');
    const cliEnv = claudeCodeEnv(home, model.url);
    for (const [folder, origin] of [
      [widgets, 'https://github.com/acme/widgets'],
      [scratch, undefined],
    ] as const) {
      mkdirSync(folder, { recursive: true });
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: folder });
      if (origin) execFileSync('git', ['remote', 'add', 'origin', origin], { cwd: folder });
      const command = claudeCodeCommand({
        prompt: `Remember that the colour is teal in ${folder === widgets ? 'widgets' : 'scratch'}. CONTINUE-ME`,
        model: 'claude-sonnet-4-5',
      });
      const run = await runProgram(bin!, command.args, command.stdin, folder, cliEnv);
      expect(run.code, run.stderr).toBe(0);
    }
    const { dataDir, data } = await dataDirImporting(root, join(home, '.claude'), home);
    const server = await startServe(dataDir, ['--log-level', 'warn'], {
      ...Object.fromEntries(QUIET.map((name) => [name, cliEnv[name]])),
      HOME: home,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: cliEnv.ANTHROPIC_API_KEY,
      IS_SANDBOX: '1',
      SESSIONDESK_CLAUDE_BIN: bin!,
      SESSIONDESK_AGENT_ENV: QUIET.join(','),
      SESSIONDESK_DEMO_PACE_MS: '3600000',
    });
    stops.push(() => server.stop());

    await signIn(page, server.url, data.email, data.password);

    // Without a repository, the sandbox is not offered, and the box says why.
    await page
      .getByRole('link', { name: /teal in scratch/ })
      .first()
      .click();
    const scratchChoice = page.getByRole('group', { name: /Imported from Claude Code/ });
    await expect(scratchChoice.getByRole('radio', { name: /In a fresh sandbox/ })).toBeDisabled();
    await expect(scratchChoice).toContainText('This session has no repository to clone');

    await page
      .getByRole('navigation', { name: 'Breadcrumb' })
      .getByRole('link', { name: 'Sessions' })
      .click();
    await page
      .getByRole('link', { name: /teal in widgets/ })
      .first()
      .click();
    const choice = page.getByRole('group', { name: /Imported from Claude Code/ });
    await expect(choice.getByRole('radio', { name: /In a fresh sandbox/ })).toBeEnabled();
    await expect(choice).toContainText('acme/widgets');
    await expect(choice).toContainText(widgets);

    await choice.getByRole('radio', { name: /In its original folder/ }).check();
    await page.getByLabel('Follow-up prompt').fill('Which colour did I name?');
    await page.getByRole('button', { name: 'Send' }).click();
    const dialog = page.getByRole('dialog', { name: 'Continue in your own folder?' });
    await expect(dialog).toContainText(widgets);
    await expect(dialog).toContainText('your own work tree');
    // Cancelling sends nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByLabel('Follow-up prompt')).toHaveValue('Which colour did I name?');

    await page.getByRole('button', { name: 'Send' }).click();
    await dialog.getByRole('button', { name: 'Continue in my folder' }).click();
    const transcript = page.getByRole('region', { name: 'Conversation' });
    await expect(transcript.getByText('Which colour did I name?')).toBeVisible();
    // The resumed run's answer, and its result, which says it finished.
    await expect(
      transcript.getByRole('status').filter({ hasText: 'Answered in your folder: teal.' }),
    ).toContainText('Finished', { timeout: 60_000 });
    await expect(page.getByLabel('Follow-up prompt')).toHaveValue('');
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(root, { recursive: true, force: true });
  }
});
