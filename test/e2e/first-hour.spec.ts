import { rmSync } from 'node:fs';
import type { Locator, Page } from '@playwright/test';
import { startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('the tab names the page: the list, a session, a settings page', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await expect(page).toHaveTitle('Sessions · Session Desk');
  await page.getByRole('link', { name: /Fix the flaky login test/ }).click();
  await expect(page).toHaveTitle('Fix the flaky login test · Session Desk');
  await page.getByRole('link', { name: 'Members' }).click();
  await expect(page).toHaveTitle('Members · Session Desk');
  await page.getByRole('link', { name: 'API keys' }).click();
  await expect(page).toHaveTitle('API keys · Session Desk');
});

test('the list says which time it shows: when each session started, the order it is in', async ({
  page,
  crowded,
}) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  const rows = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
  await expect(rows.first()).toContainText(/started (just now|\d+ \w+ ago)/);
  const started = rows.first().locator('.session-times time').first();
  const createdAt = await started.getAttribute('datetime');
  const next = await rows.nth(1).locator('.session-times time').first().getAttribute('datetime');
  // Newest first by that same time.
  expect(Date.parse(createdAt ?? '')).toBeGreaterThanOrEqual(Date.parse(next ?? ''));
});

test('renaming to a blank title keeps the editor open with the reason', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: /Fix the flaky login test/ }).click();
  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByLabel('Title').fill('   ');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toContainText('blank');
  await expect(page.getByLabel('Title')).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Title').fill('Quarantine the login test');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('heading', { name: 'Quarantine the login test', level: 1 })).toBeVisible();
  await expect(page.getByRole('alert')).toBeHidden();
});

test('adding a member: the unknown email is invited, and the answer goes once a new account is chosen', async ({
  page,
  seeded,
}) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'Members' }).click();
  await page.getByLabel('Email').fill('nobody@example.test');
  await page.getByRole('button', { name: 'Add member' }).click();
  const answer = page.getByRole('status').filter({ hasText: 'No account has this email yet' });
  await expect(answer).toContainText('nobody@example.test is invited');
  await page.getByLabel('Create a new local account for this person').check();
  await expect(page.getByLabel('Name')).toBeVisible();
  await expect(answer).toBeHidden();
  await expect(page.getByRole('alert')).toBeHidden();
});

test('at 900 px the stat cards stay short, their descriptions kept as tooltips', async ({ page, seeded }) => {
  await page.setViewportSize({ width: 900, height: 800 });
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  const stats = page.getByRole('region', { name: 'Workspace stats' });
  const card = stats.locator('.stat').first();
  await expect(card).toContainText('Merged this week');
  await expect(card.locator('.stat-hint')).toBeHidden();
  await expect(card).toHaveAttribute('title', /Pull requests from sessions/);
  // Short enough that the sessions, not the cards, fill the first screen.
  const box = await stats.boundingBox();
  expect(box?.height).toBeLessThan(130);
  await page.setViewportSize({ width: 1440, height: 800 });
  await expect(card.locator('.stat-hint')).toBeVisible();
});

/** `serve --demo`, its simulated agent held still, signed in as the demo's owner. */
async function signedInToDemo(page: Page) {
  const dataDir = tempDir('sessiondesk-e2e-demo-');
  const server = await startServe(dataDir, ['--demo', '--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: '3600000',
  });
  await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
  const [, email, password] = /Demo sign-in: (\S+) \/ (\S+)/u.exec(server.stdout())!;
  await signIn(page, server.url, email!, password!);
  return {
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Stops the session the page shows, as a person does: Stop, then confirm. */
async function stopTheSession(page: Page) {
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page
    .getByRole('dialog', { name: 'Stop this session?' })
    .getByRole('button', { name: 'Stop the agent' })
    .click();
  await expect(page.locator('.session-head .badge').first()).toHaveText('Stopped');
}

test('the demo: a stop reads as stopped, paused sessions say nobody is working, cost is simulated', async ({
  page,
}) => {
  const demo = await signedInToDemo(page);
  try {
    const cost = page.getByRole('region', { name: 'Workspace stats' }).locator('.stat').last();
    await expect(cost).toContainText('Agent cost this week');
    await expect(cost.locator('.stat-value')).toContainText(/\$\d+\.\d\d simulated/);
    await expect(cost.locator('.stat-value')).not.toHaveText('$0.00');

    // An active demo session waits for its person: no endless "working".
    const active = page.getByRole('link', { name: /Add retries with backoff to the upload client/ }).first();
    await expect(active).toContainText('Active');
    await expect(active).not.toContainText('step by step');
    await active.click();
    await expect(
      page.getByRole('status').filter({ hasText: 'No agent is working on this session now' }),
    ).toBeVisible();
    await expect(page.getByText('The agent is working…')).toBeHidden();
    const transcriptTodo = page.locator('.todo-update').last();
    const tasksLine = page.getByRole('region', { name: 'Tasks' }).locator('p').first();
    const done = /(\d+) of (\d+) done/u;
    expect((await transcriptTodo.textContent())?.match(done)?.slice(1)).toEqual(
      (await tasksLine.textContent())?.match(done)?.slice(1),
    );

    // Stopped: neutral on the page and in the list, never the green of a success.
    await stopTheSession(page);
    await page.getByRole('link', { name: 'Sessions' }).first().click();
    const row = page.getByRole('link', { name: /Add retries with backoff to the upload client/ }).first();
    await expect(row.locator('.badge').first()).toHaveText('Stopped');
  } finally {
    await demo.stop();
  }
});

test("the demo: a stopped session's task panel and its transcript's last task update agree", async ({
  page,
}) => {
  const demo = await signedInToDemo(page);
  try {
    await page
      .getByRole('link', { name: /Add retries with backoff to the upload client/ })
      .first()
      .click();
    await stopTheSession(page);

    // Nobody works on a task once the run is over: both say which are done and which are not.
    const panel = page.getByRole('region', { name: 'Tasks' });
    const transcriptTodo = page.locator('.todo-update').last();
    await expect(panel.locator('p').first()).toHaveText(/^\d+ of \d+ done · [1-9]\d* not done$/u);
    const panelSays = (await panel.locator('p').first().textContent())!;
    await expect(transcriptTodo.locator('summary')).toContainText(panelSays);
    await transcriptTodo.locator('summary').click();
    const marks = (list: Locator) =>
      list
        .locator('li')
        .evaluateAll((items) =>
          items.map((item) => `${item.className.replace('task ', '')} ${item.textContent?.trim() ?? ''}`),
        );
    const shownInPanel = await marks(panel.getByRole('list', { name: 'Tasks' }));
    expect(shownInPanel.some((t) => t.startsWith('task-not_done'))).toBe(true);
    expect(await marks(transcriptTodo.getByRole('list', { name: 'Task update' }))).toEqual(shownInPanel);
  } finally {
    await demo.stop();
  }
});
