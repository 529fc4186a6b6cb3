// A signed-out page load asks the server who is signed in (GET /api/auth/me) and is told nobody:
// an answer the dashboard expects, not a refusal for the log at its default level.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('signed-out page loads leave no "refused" line in the log; a signed-in one none either', async ({
  page,
}) => {
  const root = tempDir('sessiondesk-e2e-signed-out-');
  const data = await seedDataDir(join(root, 'data'));
  const server = await startServe(join(root, 'data'));
  try {
    const asked = page.waitForResponse((r) => r.url().endsWith('/api/auth/me'));
    await page.goto(server.url);
    expect((await asked).status()).toBe(401);
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
    await page.reload();
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
    await signIn(page, server.url, data.email, data.password);
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
    // A refusal that is one (a request without credentials) is still told, after all of them.
    expect((await fetch(`${server.url}/api/sessions`)).status).toBe(401);
    await expect.poll(() => server.stderr()).toContain('refused GET /api/sessions: 401');
    expect(server.stderr()).not.toContain('/api/auth/me');
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
