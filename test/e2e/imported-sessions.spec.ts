// Imported sessions in a real browser: the list marks them and filters them by agent and by
// source; a session's page says where it came from, where its changes are, offers only the ways
// to continue it that can work, and never a Stop that cannot reach the person's terminal.
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, startServe } from '../helpers/cli.js';
import { copyClaudeScenario } from '../helpers/imported.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';
import { expect, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

const claude = agentCliTool('claude');
const LONG_AGO_MS = 24 * 60 * 60 * 1000;

/**
 * A data directory whose workspace has, beside the seeded session run here: a Claude Code
 * conversation long over in the person's clone of acme/widgets, one going on now in a folder
 * that is gone (the first run of a conversation, its file just written) and a Codex one.
 */
async function importedWorkspace(root: string) {
  const widgets = join(root, 'widgets');
  mkdirSync(widgets);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: widgets });
  execFileSync('git', ['remote', 'add', 'origin', 'https://github.com/acme/widgets'], { cwd: widgets });
  const over = copyClaudeScenario('plain-answer', { cwd: widgets, writtenAgoMs: LONG_AGO_MS });
  const going = copyClaudeScenario('resume');
  const lines = readFileSync(going.file, 'utf8').split('\n');
  const firstRunEnd = lines.findIndex((l) => l.includes('"type":"cost-state"')) + 1;
  writeFileSync(going.file, `${lines.slice(0, firstRunEnd).join('\n')}\n`);
  const codex = join(root, 'codex');
  cpSync(join(ROOT, 'test', 'fixtures', 'history', 'codex', '0.169.0', 'plain-answer'), codex, {
    recursive: true,
  });
  const longAgo = new Date(Date.now() - LONG_AGO_MS);
  for (const file of readdirSync(codex, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.jsonl')) utimesSync(join(codex, file), longAgo, longAgo);
  }
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const data = await seedDataDir(dataDir);
  for (const args of [
    ['--claude-dir', over.root, '--codex-dir', codex],
    ['--claude-dir', going.root],
  ]) {
    const imported = await runCli(
      ['history', 'import', '--workspace', data.organizationId, ...args, '--data-dir', dataDir],
      { HOME: root, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
    );
    expect(imported.code, imported.stderr).toBe(0);
  }
  return {
    data,
    dataDir,
    widgets,
    over,
    going,
    goOn: () => appendFileSync(going.file, lines.slice(firstRunEnd).join('\n')),
    cleanup: () => {
      for (const dir of [over.root, going.root]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('the list marks imported sessions and filters them; a session says where it came from and what it cannot do', async ({
  page,
}) => {
  test.setTimeout(150_000);
  const root = tempDir('sessiondesk-e2e-imported-');
  const made = await importedWorkspace(root);
  // Claude Code is not installed here: no program on PATH, none named.
  const server = await startServe(made.dataDir, ['--log-level', 'warn'], {
    HOME: root,
    PATH: '/usr/bin:/bin',
    SESSIONDESK_CLAUDE_BIN: '',
  });
  try {
    await signIn(page, server.url, made.data.email, made.data.password);
    const list = page.getByRole('list', { name: 'Sessions' });
    const rows = list.getByRole('listitem');
    await expect(rows).toHaveCount(4);
    await expect(rows.filter({ hasText: 'Claude Code · imported' })).toHaveCount(2);
    await expect(rows.filter({ hasText: 'Codex · imported' })).toHaveCount(1);

    await page.getByLabel('Agent').selectOption('codex');
    await expect(rows).toHaveCount(1);
    await expect(rows).toContainText('Codex · imported');
    await expect(page).toHaveURL(/agent=codex/u);
    await page.getByLabel('Agent').selectOption('');
    await page.getByLabel('Source').selectOption('run');
    await expect(rows).toHaveCount(1);
    await expect(rows).toContainText('Fix the flaky login test');
    await page.getByLabel('Source').selectOption('imported');
    await expect(rows).toHaveCount(3);
    await page.getByLabel('Agent').selectOption('claude-code');
    await expect(rows).toHaveCount(2);

    await rows.filter({ hasText: 'acme/widgets' }).getByRole('link').click();
    await expect(page.getByText(`Imported from Claude Code · ${made.over.file}`)).toBeVisible();
    const details = page.getByRole('region', { name: 'Details' });
    await expect(details).toContainText(`Source file${made.over.file}`);
    await expect(details).toContainText(`Ran in${made.widgets}`);
    await expect(details).toContainText('Repositoryacme/widgets');
    const changes = page.getByRole('region', { name: 'Changes' });
    await expect(changes).toContainText(`in your own folder ${made.widgets}`);
    await expect(changes).not.toContainText('no repository');

    // Its CLI is not here: said before Send, and neither way is offered.
    const choice = page.getByRole('group', { name: /Imported from Claude Code/u });
    await expect(choice.getByRole('note')).toContainText('SESSIONDESK_CLAUDE_BIN');
    await expect(choice.getByRole('radio', { name: /In its original folder/u })).toBeDisabled();
    await expect(choice.getByRole('radio', { name: /In a fresh sandbox/u })).toBeDisabled();
    await page.getByLabel('Follow-up prompt').fill('Go on');
    await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled();
  } finally {
    await server.stop();
    made.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a session going on in the terminal is marked finished, not stopped, and its next lines follow in order', async ({
  page,
}) => {
  requireTools(claude);
  // Two imports, a server, and the follower reading a file appended to: more than the default minute.
  test.setTimeout(150_000);
  const root = tempDir('sessiondesk-e2e-imported-');
  const made = await importedWorkspace(root);
  const server = await startServe(made.dataDir, ['--log-level', 'warn'], {
    HOME: root,
    SESSIONDESK_CLAUDE_BIN: claude.path!,
  });
  try {
    await signIn(page, server.url, made.data.email, made.data.password);
    await page.getByRole('listitem').filter({ hasText: 'acme/widgets' }).getByRole('link').click();
    // The clone is there and has an origin: both ways are offered to the administrator.
    const choice = page.getByRole('group', { name: /Imported from Claude Code/u });
    await expect(choice.getByRole('radio', { name: /In its original folder/u })).toBeEnabled();
    await expect(choice.getByRole('radio', { name: /In a fresh sandbox/u })).toBeEnabled();

    await page.getByRole('link', { name: 'Sessions' }).first().click();
    await page.getByRole('link', { name: /Remember that the colour is teal/u }).click();
    const head = page.locator('.session-head');
    await expect(head).toContainText('Active');
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);
    await expect(head).toContainText('Going on in Claude Code in your terminal');

    // Its folder is gone and it has no repository: neither way, and why.
    await expect(choice.getByRole('radio', { name: /In its original folder/u })).toBeDisabled();
    await expect(choice).toContainText(`The folder ${made.going.cwd} this session ran in is gone`);
    await expect(choice.getByRole('radio', { name: /In a fresh sandbox/u })).toBeDisabled();
    await expect(choice).toContainText('no repository to clone');
    await expect(choice).toContainText('Neither way can work here now');

    await page.getByRole('button', { name: 'Mark as finished' }).click();
    await expect(head).toContainText('Completed');
    const transcript = page.getByRole('region', { name: 'Conversation' });
    // Each turn of the terminal ends in a result card; marking it finished added none.
    const results = transcript.locator('.result');
    await expect(results).toHaveCount(1);

    made.goOn();
    await expect(head).toContainText('Active', { timeout: 15_000 });
    await expect(results).toHaveCount(2, { timeout: 15_000 });
    // The terminal's next prompt comes after the first turn's result, as it was written.
    const first = transcript.getByText('Remember that the colour is teal. RESUME-FIRST');
    const next = transcript.getByText('Which colour did I tell you?');
    await expect(next).toBeVisible();
    const top = async (at: typeof first) => (await at.boundingBox())?.y ?? Number.NaN;
    expect(await top(first)).toBeLessThan(await top(results.first()));
    expect(await top(results.first())).toBeLessThan(await top(next));
    await expect(transcript).not.toContainText('Stopped');
  } finally {
    await server.stop();
    made.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});
