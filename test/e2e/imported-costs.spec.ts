// Claude Code sessions whose files hold no cost-state line (an interactive session, a run cut
// short): their tokens are counted, priced by the table where it has the model, and a cost it
// cannot price says so, on the session's page and on the week's cost card; never $0.00.
import { readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe } from '../helpers/cli.js';
import { copyClaudeScenario } from '../helpers/imported.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

const LONG_AGO_MS = 24 * 60 * 60 * 1000;

/**
 * A recorded scenario without its cost-state lines, dated yesterday (so its run is this week's),
 * with its model renamed to `model`.
 */
function withoutCostState(scenario: string, model: string) {
  const copy = copyClaudeScenario(scenario);
  const yesterday = new Date(Date.now() - LONG_AGO_MS).toISOString().slice(0, 10);
  const lines = readFileSync(copy.file, 'utf8')
    .split('\n')
    .filter((line) => !line.includes('"type":"cost-state"'))
    .map((line) =>
      line
        .replaceAll(/"timestamp":"\d{4}-\d\d-\d\d/gu, `"timestamp":"${yesterday}`)
        .replaceAll('"model":"claude-sonnet-4-5"', `"model":"${model}"`),
    );
  writeFileSync(copy.file, lines.join('\n'));
  // Written long ago: the session ended.
  const then = new Date(Date.now() - LONG_AGO_MS);
  utimesSync(copy.file, then, then);
  return copy;
}

test('a Claude Code file without cost records: tokens counted, priced where the table can, else "cost unknown", never $0.00', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const root = tempDir('sessiondesk-e2e-costs-');
  const priced = withoutCostState('plain-answer', 'claude-sonnet-4-5');
  const unpriced = withoutCostState('todo-write', 'claude-unlisted-9');
  const dataDir = join(root, 'data');
  const data = await seedDataDir(dataDir);
  for (const copy of [priced, unpriced]) {
    const imported = await runCli(
      [
        'history',
        'import',
        '--workspace',
        data.organizationId,
        '--claude-dir',
        copy.root,
        '--data-dir',
        dataDir,
      ],
      { HOME: root, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
    );
    expect(imported.code, imported.stderr).toBe(0);
  }
  const server = await startServe(dataDir, ['--log-level', 'warn'], { HOME: root });
  try {
    await signIn(page, server.url, data.email, data.password);
    const cost = page.getByRole('region', { name: 'Workspace stats' }).locator('.stat', {
      hasText: 'Agent cost this week',
    });
    // The priced run's cost, and the part left unknown, said as such.
    await expect(cost.locator('.stat-value')).toHaveText(/^\$0\.\d{4} \+ unknown$/u);
    await expect(cost.getByRole('listitem')).toHaveText([
      'cost of 1 Claude Code session unknown: no price for claude-unlisted-9',
    ]);

    const rows = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
    await rows
      .filter({ hasText: 'Claude Code · imported' })
      .filter({ hasText: /todo/iu })
      .getByRole('link')
      .click();
    const usage = page.getByRole('definition').filter({ hasText: / in · .* out/u });
    await expect(usage).toContainText('cost unknown: no price for claude-unlisted-9');
    await expect(usage).not.toContainText('$');

    await page.goBack();
    await rows
      .filter({ hasText: 'Claude Code · imported' })
      .filter({ hasNotText: /todo/iu })
      .getByRole('link')
      .click();
    await expect(page.getByRole('definition').filter({ hasText: / in · .* out/u })).toHaveText(
      /^\S+ in · \S+ out · \$0\.\d{4}$/u,
    );
  } finally {
    await server.stop();
    for (const dir of [root, priced.root, unpriced.root]) rmSync(dir, { recursive: true, force: true });
  }
});
