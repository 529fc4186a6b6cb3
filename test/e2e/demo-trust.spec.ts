import { rmSync } from 'node:fs';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { DEMO } from '../../src-main/demo/people.js';
import { startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { expect, test } from './fixtures.js';

test('the demo: the printed URL signs in without a password on the page; the demo runs only the demo agent', async ({
  page,
}) => {
  const dataDir = tempDir('sessiondesk-e2e-demo-');
  const server = await startServe(dataDir, ['--demo', '--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: '3600000',
  });
  try {
    await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
    const printed = /Demo sign-in: (\S+) \/ (\S+)/u.exec(server.stdout());
    const password = printed![2]!;
    expect(password).not.toBe('sessiondesk-demo');

    // Without the token, the page says where to sign in, and never shows the password.
    await page.goto(server.url);
    await expect(page.getByRole('note')).toContainText('open the URL sessiondesk serve --demo printed');
    await expect(page.getByRole('button', { name: 'Sign in to the demo workspace' })).toHaveCount(0);
    expect(await page.content()).not.toContain(password);

    // With it, one click signs in; the token is gone from the address bar.
    await page.goto(server.launchUrl);
    await expect(page).toHaveURL(`${server.url}/`);
    await page.getByRole('button', { name: 'Sign in to the demo workspace' }).click();
    await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
    expect(await page.content()).not.toContain(password);

    // A command the administrator defined is there, but not for the demo's accounts: the choice
    // is disabled, saying why, before any Save (and the server refuses it all the same).
    await writeNamedCommands(dataDir, {
      claude: ['claude', '-p', '--output-format', 'stream-json', '--verbose'],
    });
    await page.goto(`${server.url}/settings/agent`);
    const command = page.getByLabel('A local agent command the administrator defined');
    await expect(command).toBeDisabled();
    await expect(command).toHaveAccessibleDescription(
      "The demo's accounts run the demo agent only: create your own account for that.",
    );
    await expect(page.getByLabel(/Demo agent/)).toBeChecked();
    const refused = await page.request.put(`${server.url}/api/workspaces/${DEMO.organizationId}/agent`, {
      headers: { origin: server.url },
      data: { agent: 'command', commandName: 'claude' },
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain("The demo's accounts run the demo agent only");
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}-sandboxes`, { recursive: true, force: true });
  }
});
