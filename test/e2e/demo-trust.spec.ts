import { rmSync } from 'node:fs';
import { writeNamedCommands } from '../../src-main/agents/named-commands.js';
import { startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { expect, test } from './fixtures.js';

test('a demo data directory shows its random sign-in; owners pick only the commands the administrator defined', async ({
  page,
}) => {
  const dataDir = tempDir('sessiondesk-e2e-demo-');
  const server = await startServe(dataDir, ['--demo', '--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: '3600000',
  });
  try {
    await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
    const printed = /Demo sign-in: (\S+) \/ (\S+)/u.exec(server.stdout());
    expect(printed?.[2]).not.toBe('sessiondesk-demo');
    await page.goto(server.url);
    const note = page.getByRole('note');
    await expect(note).toContainText(printed![1]!);
    await expect(note).toContainText(printed![2]!);
    await page.getByLabel('Email').fill(printed![1]!);
    await page.getByLabel('Password').fill(printed![2]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();

    await page.goto(`${server.url}/settings/agent`);
    await page.getByLabel('A local agent command the administrator defined').check();
    await expect(page.getByText('sessiondesk agent-command set NAME -- program args…')).toBeVisible();
    await writeNamedCommands(dataDir, {
      claude: ['claude', '-p', '--output-format', 'stream-json', '--verbose'],
    });
    await page.reload();
    await page.getByLabel('A local agent command the administrator defined').check();
    await expect(page.getByRole('combobox', { name: 'Command', exact: true })).toHaveValue('claude');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Set for this workspace.')).toBeVisible();
    await expect(page.getByRole('combobox', { name: 'Command', exact: true })).toHaveValue('claude');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}-sandboxes`, { recursive: true, force: true });
  }
});
