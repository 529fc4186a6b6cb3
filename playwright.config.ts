import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests drive the built dashboard, served by a real `sessiondesk serve` process
 * per test, in Chromium. Playwright cannot download its own browser here: it uses the
 * system's (Debian's `chromium`), or CHROMIUM_PATH.
 */
export default defineConfig({
  testDir: 'test/e2e',
  outputDir: 'test-results/e2e',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  // Each test starts a server and a browser; two cores run one at a time well.
  workers: 1,
  reporter: [['list'], ['json', { outputFile: 'test-results/playwright.json' }]],
  use: {
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
