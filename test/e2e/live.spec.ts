import { expect, signIn, test } from './fixtures.js';

test('watch the demo agent work live, then follow up', async ({ page, live }, testInfo) => {
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('Tidy up the retry helper');
  await page.getByLabel('Repository URL').fill('https://github.com/acme/web');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { name: 'Tidy up the retry helper', level: 1 })).toBeVisible();

  // The agent's steps arrive without a reload: a note while it works, then tools, tasks, a result.
  await expect(page.getByText('The agent is working…')).toBeVisible();
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(transcript.locator('details.tool').first()).toBeVisible({ timeout: 15_000 });
  await expect(page.getByRole('list', { name: 'Tasks' }).getByRole('listitem').first()).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('agent-working.png') });
  await expect(transcript.getByRole('status')).toContainText('Finished', { timeout: 30_000 });
  await expect(page.locator('.session-head .badge')).toHaveText('Completed');
  await expect(
    page.getByRole('region', { name: 'Details' }).getByText(/^agent\/tidy-up-the-retry-helper-/),
  ).toBeVisible();

  // A follow-up makes it active again and gets its own answer.
  await page.getByLabel('Follow-up prompt').fill('Also add a test for the backoff');
  await page.keyboard.press('Control+Enter');
  await expect(page.locator('.session-head .badge')).toHaveText('Active');
  await expect(
    transcript.locator('.turn-user', { hasText: 'Also add a test for the backoff' }),
  ).toBeVisible();
  await expect(transcript.getByRole('status').filter({ hasText: 'Finished' })).toHaveCount(2, {
    timeout: 30_000,
  });
  await expect(page.locator('.session-head .badge')).toHaveText('Completed');

  // The list shows it too, updated live.
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Sessions', exact: true })
    .click();
  const row = page.getByRole('link', { name: /Tidy up the retry helper/ });
  await expect(row).toContainText('Completed');
  await page.screenshot({ path: testInfo.outputPath('list-after-agent.png') });
});

test('task updates say what is true as the run goes and once it has succeeded: in progress, never "not done"', async ({
  page,
  live,
}) => {
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('Plan the retry helper');
  await page.getByRole('button', { name: 'Start session' }).click();
  const transcript = page.getByRole('list', { name: 'Transcript' });
  const summaries = transcript.locator('.todo-update .tool-summary');
  // While it works: the first task is in progress, and it says so.
  await expect(summaries.first()).toHaveText(/^0 of (\d) done · 1 in progress/u, { timeout: 15_000 });
  await expect(transcript.getByRole('status')).toContainText('Finished', { timeout: 30_000 });
  // Done: each update as it stood then, the last with every task done; none "not done".
  const texts = await summaries.allTextContents();
  const total = /^0 of (\d) done/u.exec(texts[0]!)![1];
  expect(texts[0]).toBe(`0 of ${total} done · 1 in progress`);
  expect(texts.at(-1)).toBe(`${total} of ${total} done`);
  for (const text of texts) expect(text).not.toContain('not done');
  // The panel agrees with the last update.
  await expect(page.getByRole('region', { name: 'Tasks' }).locator('p').first()).toHaveText(
    `${total} of ${total} done`,
  );
});
