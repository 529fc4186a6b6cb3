import { rmSync } from 'node:fs';
import { startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { bubblewrapTool } from '../helpers/tools.js';
import { expect, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

test('an owner limits the network to a list of hosts, and opens it again', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'Agent', exact: true }).click();
  const network = page.getByRole('region', { name: 'Network' });
  await expect(network.getByText("Network: open (agents' programs reach any host)")).toBeVisible();

  const hosts = network.getByLabel('Allowed hosts');
  await hosts.fill('api.anthropic.com\n*');
  await network.getByRole('button', { name: 'Limit to these hosts' }).click();
  // The server's complaint names the host it is about.
  await expect(network.getByRole('alert')).toContainText('*: must be a host name');

  await hosts.fill('API.anthropic.com\n*.github.com:443');
  await network.getByRole('button', { name: 'Limit to these hosts' }).click();
  await expect(network.getByRole('status')).toHaveText('Saved. New sessions and follow-ups use it.');
  await page.reload();
  await expect(network.getByText("Network: only these hosts, through Session Desk's proxy")).toBeVisible();
  await expect(
    network.getByRole('list', { name: 'Hosts agents may reach' }).getByRole('listitem'),
  ).toHaveText(['api.anthropic.com', '*.github.com:443']);
  await expect(hosts).toHaveValue('api.anthropic.com\n*.github.com:443');

  // Saving the agent keeps the list.
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();
  await page.reload();
  await expect(
    network.getByRole('list', { name: 'Hosts agents may reach' }).getByRole('listitem'),
  ).toHaveCount(2);

  await network.getByRole('button', { name: 'Open the network' }).click();
  await expect(network.getByText("Network: open (agents' programs reach any host)")).toBeVisible();
  await page.reload();
  await expect(network.getByText("Network: open (agents' programs reach any host)")).toBeVisible();
  await expect(hosts).toHaveValue('');
});

test('with bubblewrap the page says agents run in an operating-system sandbox', async ({ page, seeded }) => {
  requireTools(bubblewrapTool());
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'Agent', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Sandbox' })).toContainText(
    'Agents run in an operating-system sandbox.',
  );
});

test('without an operating-system sandbox the page says the list is not enforced', async ({ page }) => {
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn'], { SESSIONDESK_OS_SANDBOX: 'off' });
  try {
    await signIn(page, server.url, data.email, data.password);
    await page.getByRole('link', { name: 'Agent', exact: true }).click();
    const network = page.getByRole('region', { name: 'Network' });
    await expect(network.getByRole('note')).toContainText('Not enforced on this machine.');
    await expect(network.getByRole('note')).toContainText('cannot be enforced');
    // The page says plainly that agents run without a sandbox, and why.
    const sandbox = page.getByRole('region', { name: 'Sandbox' });
    await expect(sandbox.getByRole('note')).toContainText('No sandbox: agents run as your user');
    await expect(sandbox.getByRole('note')).toContainText('SESSIONDESK_OS_SANDBOX=off');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
