// A desktop's session pushed to a team server, as the team sees it in a real browser: the
// session page says which machine it came from, whose it was there, and when it was pushed.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { runCli } from '../helpers/cli.js';
import { copyClaudeScenario } from '../helpers/imported.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { storeOptions } from './backend.js';
import { expect, signIn, test } from './fixtures.js';

test('a pushed session names its machine, its author there and when it was pushed', async ({
  page,
  seeded,
}) => {
  const team = seeded.server;
  const key = await runCli([
    'key',
    'create',
    '--workspace',
    seeded.data.organizationId,
    '--push-only',
    ...storeOptions(team),
  ]);
  expect(key.code, key.stderr).toBe(0);

  const deskDir = tempDir('sessiondesk-e2e-desk-');
  // A Claude Code conversation the person had in their own folder (no repository there), long
  // over, imported on the desktop before the push.
  const cli = copyClaudeScenario('plain-answer', { cwd: '/home/bo/widgets', writtenAgoMs: 24 * 3_600_000 });
  try {
    const desk = await seedDataDir(deskDir, 'bo@desk.test');
    const imported = await runCli(
      ['history', 'import', '--workspace', 'Acme', '--claude-dir', cli.root, '--data-dir', deskDir],
      { HOME: deskDir, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
    );
    expect(imported.code, imported.stderr).toBe(0);
    const pushed = await runCli([
      'push',
      '--to',
      team.url,
      '--key',
      key.stdout.trim(),
      '--workspace',
      'Acme',
      '--data-dir',
      deskDir,
    ]);
    expect(pushed.code, pushed.stderr).toBe(0);

    await signIn(page, team.url, seeded.data.email, seeded.data.password);
    await page.goto(`${team.url}/sessions/${desk.transcriptSessionId}`);
    await expect(page.getByText(`Pushed from ${hostname()} by Ada Lovelace (bo@desk.test)`)).toBeVisible();
    await expect(page.getByText(/Pushed from .* · just now/u)).toBeVisible();
    // Its changes are on that desktop: said so, not "no repository".
    const changes = page.getByRole('region', { name: 'Changes' });
    await expect(changes).toContainText(
      `This session was pushed here from ${hostname()}: its changes are on that desktop, not on this server.`,
    );

    // The imported one ran in the person's folder: the panel shows it.
    await page.goto(team.url);
    await page
      .getByRole('link', { name: /Say hello/u })
      .first()
      .click();
    await expect(page.getByText(/Pushed from /u)).toBeVisible();
    await expect(changes).toContainText(
      `This session was pushed here from ${hostname()}, where it ran in /home/bo/widgets: its changes are there, not on this server.`,
    );
    await expect(changes.locator('code', { hasText: '/home/bo/widgets' })).toBeVisible();
    await expect(changes).not.toContainText('no repository');
    // A session run on the team server says nothing of the kind.
    await page.goto(`${team.url}/sessions/${seeded.data.transcriptSessionId}`);
    await expect(page.getByRole('heading', { name: 'Fix the flaky login test' })).toBeVisible();
    await expect(page.getByText(/Pushed from/u)).toHaveCount(0);
  } finally {
    rmSync(deskDir, { recursive: true, force: true });
    rmSync(cli.root, { recursive: true, force: true });
  }
});
