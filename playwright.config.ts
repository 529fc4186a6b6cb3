import { defineConfig } from '@playwright/test';
import type { Backend } from './test/e2e/backend.js';

/**
 * End-to-end tests drive the built dashboard, served by a real `sessiondesk serve` process
 * per test, in Chromium. Playwright cannot download its own browser here: it uses the
 * system's (Debian's `chromium`), or CHROMIUM_PATH.
 *
 * Two projects: `desktop`, every spec on servers over their data directory (sql.js), and
 * `team-server`, the specs about what a team sees (sign-in through an identity provider among
 * them), on `serve --database` over one throw-away PostgreSQL cluster per worker, a fresh
 * database per server.
 */
export default defineConfig<{ backend: Backend }>({
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
  projects: [
    { name: 'desktop', use: { backend: 'desktop' } },
    {
      name: 'team-server',
      use: { backend: 'team-server' },
      // Left out, being about a desktop's own machine: history sources and imported CLI
      // sessions read the agent CLIs' files on this machine (refused with --database),
      // continue-imported continues such a session, the Electron specs drive the desktop app,
      // and demo, demo-trust and first-hour start on the demo workspace (refused with --database).
      // Left out too, being about the agents, which run the same on either database and are
      // covered on it through the API: acp-agent, agents, agent-network, changes, pull-request,
      // run-queue, sub-agents, long-transcript, transcript-images, search-indexing.
      testMatch: [
        'dashboard.spec.ts',
        'sessions-list.spec.ts',
        'session-page.spec.ts',
        'first-run-and-settings.spec.ts',
        'live.spec.ts',
        'approvals-inbox.spec.ts',
        'approval-rules.spec.ts',
        'search.spec.ts',
        'costs.spec.ts',
        'layout.spec.ts',
        'pushed-sessions.spec.ts',
        'identity-sign-in.spec.ts',
      ],
    },
  ],
});
