// What an agent's request looks like in the Inbox when the agent lies: an ACP agent (the probe,
// added by the administrator) asks with a title hiding a terminal escape and a right-to-left
// override, and an option labelled "Reject (deny)" whose kind allows for the session. The page
// shows each option for what it does, the agent's words only beside it.
import { join } from 'node:path';
import { setAcpProbe, startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('an option is shown, and styled, as what it does, whatever the agent labelled it', async ({ page }) => {
  test.setTimeout(120_000);
  const dataDir = join(tempDir('sessiondesk-e2e-options-'), 'data');
  const data = await seedDataDir(dataDir);
  const set = await setAcpProbe(dataDir, '--flood', '1');
  expect(set.code, set.stderr).toBe(0);
  const server = await startServe(dataDir, ['--log-level', 'warn'], { PATH: process.env.PATH });
  try {
    const base = server.url;
    await signIn(page, base, data.email, data.password);
    const settings = await page.request.put(`${base}/api/workspaces/${data.organizationId}/agent`, {
      headers: { origin: base },
      data: { agent: 'acp', acpAgent: 'probe', approvals: 'ask' },
    });
    expect(settings.status(), await settings.text()).toBe(200);
    const created = await page.request.post(`${base}/api/sessions`, {
      headers: { origin: base },
      data: { organizationId: data.organizationId, initialMessage: 'Ask once.' },
    });
    expect(created.status(), await created.text()).toBe(201);

    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Inbox, 1 waiting' })).toBeVisible({ timeout: 60_000 });
    await nav.getByRole('link', { name: /^Inbox/ }).click();
    const request = page.getByRole('list', { name: 'Requests' }).getByRole('article');
    await expect(request).toHaveCount(1);
    // The title as a clean line: no escape, no reordering.
    await expect(request.getByRole('heading')).toHaveText(/^Tidy the build folder gnp\.exe x+…$/u);

    // The option that allows for the session says so, and looks like an allow; the agent's
    // "Reject (deny)" is only beside it. The real rejection is the one styled as a danger.
    const allows = request.getByRole('button', { name: /^Allow for this session/u });
    await expect(allows).toHaveAccessibleName(
      /^Allow for this session\s*, the agent calls it “Reject \(deny\)”$/u,
    );
    await expect(allows).not.toHaveClass(/button-danger/u);
    const rejects = request.getByRole('button', { name: /^Reject/u });
    await expect(rejects).toHaveAccessibleName(/^Reject\s*, the agent calls it “No”$/u);
    await expect(rejects).toHaveClass(/button-danger/u);

    await allows.click();
    await expect(page.getByText('Nothing waiting for you')).toBeVisible();
    const decided = await page.request.get(
      `${base}/api/sessions/${((await created.json()) as { session: { id: string } }).session.id}`,
    );
    expect(JSON.stringify(await decided.json())).toContain(
      `Allow for this session (the agent's \\"Reject (deny)\\"): decided by`,
    );
  } finally {
    await server.stop();
  }
});
