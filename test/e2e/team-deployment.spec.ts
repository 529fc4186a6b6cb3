import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { spawnServe, type ServeProcess } from '../helpers/cli.js';
import { PASSWORD } from '../helpers/cli-extra.js';
import { findPostgres, startCluster, type PostgresCluster } from '../helpers/postgres-cluster.js';
import { freePort, makeCertificates, startNginx, type RunningProxy } from '../helpers/reverse-proxy.js';
import { reverseProxyTools, type Tool } from '../helpers/tools.js';
import config from '../../playwright.config.js';
import { expect, screenshotsInBothThemes, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

/**
 * A team server deployed as docs/reference/team-server.md says, used by a person in Chromium:
 * a throw-away PostgreSQL, two `serve --database --public-url https://… --trust-proxy` processes,
 * and the documented nginx with TLS in front of them, round-robin. The first owner is made with
 * the setup code typed in; a session is watched live; Stop and follow-ups work whichever process
 * runs the agent (the server logs say which process did what for which).
 */

const postgres: Tool = {
  name: 'PostgreSQL 15+ (initdb, pg_ctl, postgres)',
  found: 'bin' in findPostgres(),
  install: 'apt-get install postgresql',
};

interface LogLine {
  event?: string;
  kind?: string;
  method?: string;
  url?: string;
  status?: number;
}

const logLines = (serve: ServeProcess): LogLine[] =>
  serve
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

/** How many stops and follow-ups a process did for the process that was asked. */
const doneForOthers = (serve: ServeProcess) =>
  logLines(serve).filter((line) => line.event === 'run-request.answered').length;

test.describe('a team server behind nginx with TLS and two processes', () => {
  let dir: string;
  let cluster: PostgresCluster;
  let proxy: RunningProxy;
  let browser: Browser;
  const serves: ServeProcess[] = [];

  test.beforeAll(async () => {
    requireTools(postgres, ...reverseProxyTools());
    test.setTimeout(120_000);
    dir = mkdtempSync(join(tmpdir(), 'sessiondesk-deploy-'));
    const certs = await makeCertificates(join(dir, 'tls'));
    cluster = await startCluster();
    const database = await cluster.createDatabase('team');
    const port = await freePort();
    for (const name of ['a', 'b']) {
      serves.push(
        await spawnServe(
          [
            '--port',
            '0',
            '--data-dir',
            join(dir, name),
            '--database',
            database,
            '--public-url',
            `https://localhost:${port}`,
            '--trust-proxy',
            'loopback',
            '--log-level',
            'debug',
            '--log-format',
            'json',
          ],
          // The demo agent takes a step every 2 s: a run goes on long enough to be stopped.
          { SESSIONDESK_DEMO_PACE_MS: '2000' },
        ),
      );
    }
    proxy = await startNginx({
      dir: join(dir, 'nginx'),
      certs,
      upstreams: serves.map((serve) => new URL(serve.url).host),
      port,
    });
    // Chromium trusts exactly this test's server key, as a browser trusts a team's certificate.
    const launch = config.use?.launchOptions ?? {};
    browser = await chromium.launch({
      ...launch,
      args: [...(launch.args ?? []), `--ignore-certificate-errors-spki-list=${certs.spkiHash}`],
    });
  });

  test.afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    for (const serve of serves) await serve.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startRun(page: Page, text: string) {
    await page.getByLabel('Follow-up prompt').fill(text);
    await page.keyboard.press('Control+Enter');
    await expect(page.getByText('The agent is working…')).toBeVisible();
  }

  async function stop(page: Page) {
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Stop this session?' })
      .getByRole('button', { name: 'Stop the agent' })
      .click();
    await expect(page.getByText('The agent is working…')).toHaveCount(0);
  }

  test('the owner made with the setup code, a session watched live, stopped and followed up whichever process runs it', async () => {
    test.setTimeout(180_000);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(proxy.url);
      // No account yet: the code printed on a server's terminal, typed in (no token in any URL).
      const code = serves[1]!.launchToken;
      expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/u);
      await expect(page.getByRole('heading', { name: 'Set up Session Desk' })).toBeVisible();
      await page.getByLabel('Setup code').fill('wrong-code-0000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect(page.getByRole('alert')).toContainText('not a setup code of this server');
      await screenshotsInBothThemes(page, 'setup-code');
      await page.getByLabel('Setup code').fill(code.toLowerCase());
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Your name').fill('Lead');
      await page.getByLabel('Email').fill('lead@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Workspace name').fill('Team');
      await page.getByRole('radio', { name: /Demo agent/u }).check();
      await page.getByRole('button', { name: 'Create account and workspace' }).click();
      await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
      const session = (await context.cookies()).find((cookie) => cookie.name === '__session');
      expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict' });
      expect(page.url()).not.toContain('token');

      // A session, watched live through the proxy.
      await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();
      await page.getByRole('link', { name: 'New session', exact: true }).first().click();
      await page.getByLabel('Prompt', { exact: true }).fill('Tidy up the retry helper');
      await page.getByRole('button', { name: 'Start session' }).click();
      await expect(page.getByRole('heading', { name: 'Tidy up the retry helper', level: 1 })).toBeVisible();
      await expect(page.getByText('The agent is working…')).toBeVisible();
      const transcript = page.getByRole('list', { name: 'Transcript' });
      const before = await transcript.getByRole('listitem').count();
      await expect
        .poll(async () => transcript.getByRole('listitem').count(), { timeout: 20_000 })
        .toBeGreaterThan(before);

      // Stop and follow up until a process other than the one running the agent was asked:
      // round robin sends the person's requests to either, and they never notice which.
      let rounds = 0;
      while (serves.reduce((sum, serve) => sum + doneForOthers(serve), 0) === 0 && rounds < 8) {
        rounds += 1;
        await stop(page);
        await expect(transcript.getByText(/Stopped by Lead/u).last()).toBeVisible();
        await startRun(page, `Follow-up ${rounds}`);
      }
      expect(
        serves.reduce((sum, serve) => sum + doneForOthers(serve), 0),
        'stops and follow-ups done for another process',
      ).toBeGreaterThan(0);
      // Whatever was asked of which process, nothing was refused for being on the other one.
      for (const serve of serves) {
        const refused = logLines(serve).filter(
          (line) => line.event === 'request.refused' && (line.status === 409 || line.status === 503),
        );
        expect(refused, JSON.stringify(refused)).toEqual([]);
      }
      await stop(page);
      await screenshotsInBothThemes(page, 'team-session');
    } finally {
      await context.close();
    }
  });
});
