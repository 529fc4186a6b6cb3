import { rmSync } from 'node:fs';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import {
  BOUNDARY_OUTPUT,
  BOUNDARY_PATTERN,
  seedLongSession,
  stepText,
  type LongSession,
} from '../helpers/long-session.js';
import { seedDataDir, type Seeded } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test as base } from './fixtures.js';

const MESSAGES = 5_000;
/** The dashboard reads the last 100 messages first: this pair is split between two pages. */
const PAIR_AT = MESSAGES - 100;

const test = base.extend<{
  long: { server: ServeProcess; data: Seeded; session: LongSession };
}>({
  long: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const data = await seedDataDir(dataDir);
    const session = await seedLongSession(dataDir, data, {
      messages: MESSAGES,
      resultChars: 3_000,
      pairAt: PAIR_AT,
      // Over 4 MiB in the last page: the server cuts it, and the page reads on to the end.
      hugeResults: { at: [MESSAGES - 49, MESSAGES - 45, MESSAGES - 41], chars: 1_500_000 },
    });
    const server = await startServe(dataDir, ['--log-level', 'warn'], {
      SESSIONDESK_DEMO_PACE_MS: '3600000',
    });
    await use({ server, data, session });
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
});

test('a long transcript opens at its end, keeps few rows in the page and reads earlier pages on the way up', async ({
  page,
  long,
}) => {
  expect(long.session.bytes).toBeGreaterThan(8_000_000);
  await signIn(page, long.server.url, long.data.email, long.data.password);
  const messageReads: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes(`/api/sessions/${long.session.sessionId}`)) messageReads.push(request.url());
  });
  await page.goto(`${long.server.url}/sessions/${long.session.sessionId}`);

  // The latest work is what shows first, in view.
  const transcript = page.getByRole('list', { name: 'Transcript' });
  const result = transcript.getByRole('status').filter({ hasText: 'Finished' });
  await expect(result).toBeInViewport();
  await expect(result).toContainText(`Reviewed ${MESSAGES - 1} steps`);
  await expect(transcript.getByText(stepText(MESSAGES - 3))).toBeVisible();
  // The whole session was never asked for: its summary and pages of messages only.
  expect(
    messageReads.some((url) => new URL(url).pathname === `/api/sessions/${long.session.sessionId}`),
  ).toBe(false);
  expect(messageReads.some((url) => url.includes('/summary'))).toBe(true);

  const rows = page.locator('[data-row-key]');
  const shown = await rows.count();
  expect(shown).toBeGreaterThan(5);
  expect(shown).toBeLessThan(150);

  // The result of the call just before the first page read waits for its call: no lone output.
  await expect(page.getByText(BOUNDARY_OUTPUT)).toHaveCount(0);
  const earlier = page.locator('.transcript-earlier');
  await expect(earlier).toContainText(`${PAIR_AT.toLocaleString('en-US')} earlier messages`);

  // Scrolling to the top reads the page before, and the call and its result are one step again.
  const scroller = page.locator('.virtual-scroller');
  await scroller.evaluate((element) => element.scrollTo({ top: 0 }));
  await expect(earlier).toContainText(`${(PAIR_AT - 100).toLocaleString('en-US')} earlier messages`);
  const grep = transcript.locator('details.tool', { hasText: BOUNDARY_PATTERN });
  await expect(grep).toHaveCount(1);
  await expect(grep.locator('.tool-state')).toHaveText('done');
  await grep.locator('summary').click();
  await expect(grep.getByLabel('Grep output')).toHaveText(BOUNDARY_OUTPUT);
  await expect(transcript.locator('details.tool', { hasText: 'Tool output' })).toHaveCount(0);
  // Reading goes on where it was: the step that was on top is still in view.
  await expect(grep).toBeInViewport();

  // Further up, more pages; the page still holds a few rows only.
  for (let n = 2; n <= 4; n += 1) {
    await scroller.evaluate((element) => element.scrollTo({ top: 0 }));
    await expect(earlier).toContainText(`${(PAIR_AT - 100 * n).toLocaleString('en-US')} earlier messages`);
  }
  // The first step of the page read before the last one is where the view was held.
  await expect(transcript.getByText(stepText(PAIR_AT - 299))).toBeInViewport();
  expect(await rows.count()).toBeLessThan(150);

  // And back to the latest in one step.
  await page.getByRole('button', { name: 'Latest ↓' }).click();
  await expect(result).toBeInViewport();
  await expect(page.getByRole('button', { name: 'Latest ↓' })).toBeHidden();
});

test('a message added while the page is open appears at the end, in view', async ({ page, long }) => {
  await signIn(page, long.server.url, long.data.email, long.data.password);
  await page.goto(`${long.server.url}/sessions/${long.session.sessionId}`);
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(transcript.getByRole('status').filter({ hasText: 'Finished' })).toBeInViewport();
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();

  // Another tab (the same signed-in user) sends a follow-up: this page hears of it live.
  const sent = await page.request.post(
    `${long.server.url}/api/sessions/${long.session.sessionId}/messages?organizationId=${long.data.organizationId}`,
    { data: { content: 'Now write the changelog entry' }, headers: { origin: long.server.url } },
  );
  expect(sent.status()).toBe(201);
  const followUp = transcript.locator('.turn-user', { hasText: 'Now write the changelog entry' });
  await expect(followUp).toBeInViewport();
  await expect(page.locator('.session-head .badge')).toHaveText('Active');
  expect(await page.locator('[data-row-key]').count()).toBeLessThan(150);

  // Scrolled up to read, the view stays where it is when another message arrives.
  const scroller = page.locator('.virtual-scroller');
  await scroller.evaluate((element) => element.scrollBy({ top: -1500 }));
  const key = await scroller.evaluate((element) => {
    const top = element.getBoundingClientRect().top;
    const rows = [...element.querySelectorAll('[data-row-key]')];
    return rows.find((row) => row.getBoundingClientRect().top >= top)?.getAttribute('data-row-key');
  });
  const reading = page.locator(`[data-row-key="${key}"]`);
  await expect(reading).toBeInViewport();
  const before = await reading.boundingBox();
  const readNew = page.waitForResponse((response) =>
    response.url().includes(`/messages?after=${MESSAGES + 1}&`),
  );
  const again = await page.request.post(
    `${long.server.url}/api/sessions/${long.session.sessionId}/messages?organizationId=${long.data.organizationId}`,
    { data: { content: 'And bump the version' }, headers: { origin: long.server.url } },
  );
  expect(again.status()).toBe(201);
  await readNew;
  const second = transcript.locator('.turn-user', { hasText: 'And bump the version' });
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  expect((await reading.boundingBox())?.y).toBeCloseTo(before?.y ?? NaN, 0);
  await expect(second).not.toBeInViewport();
  await page.getByRole('button', { name: 'Latest ↓' }).click();
  await expect(second).toBeInViewport();
});

test('find in transcript goes to a match among the messages read, however far from the view', async ({
  page,
  long,
}) => {
  await signIn(page, long.server.url, long.data.email, long.data.password);
  await page.goto(`${long.server.url}/sessions/${long.session.sessionId}`);
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(transcript.getByRole('status').filter({ hasText: 'Finished' })).toBeInViewport();
  // A page more, so the rows far from the view are no longer in the page.
  await page.locator('.virtual-scroller').evaluate((element) => element.scrollTo({ top: 0 }));
  await expect(page.locator('.transcript-earlier')).toContainText(
    `${(PAIR_AT - 100).toLocaleString('en-US')} earlier`,
  );
  await page.getByRole('button', { name: 'Latest ↓' }).click();
  const wanted = stepText(PAIR_AT - 99);
  await expect(transcript.getByText(wanted)).toHaveCount(0);

  const find = page.getByRole('searchbox', { name: 'Find in transcript' });
  await find.fill(wanted);
  const status = page.getByRole('search').getByRole('status');
  await expect(status).toHaveText(
    `1 match in the messages read (${(PAIR_AT - 100).toLocaleString('en-US')} earlier not read yet)`,
  );
  await find.press('Enter');
  await expect(status).toContainText('1 of 1');
  const row = page.locator('li.row-focused');
  await expect(row).toHaveText(wanted);
  await expect(row).toBeInViewport();

  // Several matches: Enter walks them from the latest, Shift+Enter back.
  await find.fill('src/module-49');
  await expect(status).toContainText(/^\d+ matches/);
  await find.press('Enter');
  await expect(page.locator('li.row-focused')).toContainText('src/module-4998');
  await find.press('Enter');
  await expect(page.locator('li.row-focused')).toContainText('src/module-4902');
  await find.press('Shift+Enter');
  await expect(page.locator('li.row-focused')).toContainText('src/module-4998');
  await expect(page.locator('li.row-focused')).toBeInViewport();
});
