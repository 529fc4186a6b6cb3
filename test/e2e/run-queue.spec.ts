import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { ROOT, startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

/** An agent that works until a file named `release` appears in its sandbox. */
const WAITING_AGENT = [process.execPath, join(ROOT, 'test', 'fixtures', 'waiting-agent.mjs'), '{prompt}'];

test('a session past the limit shows as Queued, and Stop takes it out of the queue', async ({ page }) => {
  const dataDir = tempDir('sessiondesk-e2e-');
  const sandboxRoot = defaultSandboxRoot(dataDir);
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn', '--max-runs', '1'], {
    SESSIONDESK_AGENT_COMMAND: JSON.stringify(WAITING_AGENT),
  });
  try {
    await signIn(page, server.url, data.email, data.password);
    const create = async (initialMessage: string) => {
      const response = await page.request.post(`${server.url}/api/sessions`, {
        headers: { origin: server.url },
        data: { organizationId: data.organizationId, initialMessage },
      });
      expect(response.status()).toBe(201);
      return ((await response.json()) as { session: { id: string } }).session.id;
    };
    const first = await create('Migrate the settings page');
    const second = await create('Update the changelog');

    await page.reload();
    const rowOf = (title: string) => page.getByRole('listitem').filter({ hasText: title });
    await expect(rowOf('Update the changelog').locator('.badge-queued')).toHaveText('Queued');
    await expect(rowOf('Migrate the settings page').locator('.badge-queued')).toHaveCount(0);

    await page.goto(`${server.url}/sessions/${second}`);
    expect(first).not.toBe(second);
    await expect(page.locator('.session-head .badge-queued')).toHaveText('Queued');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Stop this session?' })
      .getByRole('button', { name: 'Stop the agent' })
      .click();
    await expect(page.getByRole('list', { name: 'Transcript' }).locator('.result')).toContainText(
      'Stopped by Ada Lovelace.',
    );
    await expect(page.locator('.session-head .badge-queued')).toHaveCount(0);
    await expect(page.locator('.session-head .badge').first()).toHaveText('Stopped');
    // The run that held the place goes on.
    await page.goto(server.url);
    await expect(rowOf('Migrate the settings page').locator('.badge').first()).toHaveText('Active');
    await expect(rowOf('Update the changelog').locator('.badge').first()).toHaveText('Stopped');

    // Live, without a reload: a new session waits, and starts once the first run is stopped.
    await create('Bump the dependencies');
    await expect(rowOf('Bump the dependencies').locator('.badge-queued')).toHaveText('Queued');
    const stop = await page.request.post(`${server.url}/api/sessions/${first}/stop`, {
      headers: { origin: server.url },
    });
    expect(stop.status()).toBe(200);
    await expect(rowOf('Migrate the settings page').locator('.badge').first()).toHaveText('Stopped');
    await expect(rowOf('Bump the dependencies').locator('.badge-queued')).toHaveCount(0);
    await expect(rowOf('Bump the dependencies').locator('.badge').first()).toHaveText('Active');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sandboxRoot, { recursive: true, force: true });
  }
});
