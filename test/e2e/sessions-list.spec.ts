import type { Page } from '@playwright/test';
import { expect, signIn, test } from './fixtures.js';

const rows = (page: Page) => page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');

test('search runs as you type, without Enter', async ({ page, crowded }) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  await expect(rows(page)).toHaveCount(50);
  await page.getByLabel('Search titles and prompts').pressSequentially('flaky');
  await expect(rows(page)).toHaveCount(3);
  await expect(page).toHaveURL(/[?&]q=flaky/);
  for (const row of await rows(page).all()) await expect(row).toContainText(/flaky/i);
  // Emptying the box shows everything again.
  await page.getByLabel('Search titles and prompts').fill('');
  await expect(rows(page)).toHaveCount(50);
});

test('Enter searches at once, as its own step in the history', async ({ page, crowded }) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  await expect(rows(page)).toHaveCount(50);
  const search = page.getByLabel('Search titles and prompts');
  // Typed and sent in one go, well within the typing delay.
  await search.pressSequentially('flaky\n');
  await expect(page).toHaveURL(/[?&]q=flaky/);
  await expect(rows(page)).toHaveCount(3);
  // Enter made a history entry (typing alone replaces the current one): Back clears the search.
  await page.goBack();
  await expect(page).not.toHaveURL(/q=/);
  await expect(rows(page)).toHaveCount(50);
  await expect(search).toHaveValue('');
});

test('a filter survives opening a session, Back and reload', async ({ page, crowded }) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await expect(page).toHaveURL(/[?&]status=failed/);
  await expect(rows(page)).toHaveCount(20);
  await rows(page).first().getByRole('link').click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('number');
  await page.goBack();
  await expect(page.getByLabel('Status', { exact: true })).toHaveValue('failed');
  await expect(rows(page)).toHaveCount(20);
  await page.reload();
  await expect(page.getByLabel('Status', { exact: true })).toHaveValue('failed');
  await expect(rows(page)).toHaveCount(20);
  for (const row of await rows(page).all()) await expect(row).toContainText('Failed');
});

test('the page survives opening a session, Back and reload, and says where it is', async ({
  page,
  crowded,
}) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  const pager = page.getByRole('navigation', { name: 'Pages' });
  await expect(pager).toContainText('Page 1 · 1–50 of 62');
  await pager.getByRole('button', { name: 'Older' }).click();
  await expect(pager).toContainText('Page 2 · 51–62 of 62');
  await expect(rows(page)).toHaveCount(12);
  await expect(page).toHaveURL(/[?&]cursor=/);
  await rows(page).first().getByRole('link').click();
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await page.goBack();
  await expect(pager).toContainText('Page 2 · 51–62 of 62');
  await page.reload();
  await expect(pager).toContainText('Page 2 · 51–62 of 62');
  await expect(rows(page)).toHaveCount(12);
  await pager.getByRole('button', { name: 'Newer' }).click();
  await expect(pager).toContainText('Page 1 · 1–50 of 62');
  await expect(page).not.toHaveURL(/cursor=/);
});

test('the repository filter offers the known repositories, in any case, and clears', async ({
  page,
  crowded,
}) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  await expect(page.locator('#repositories option')).toHaveCount(2);
  await expect(page.locator('#repositories option').first()).toHaveAttribute('value', 'acme/api');
  const repository = page.getByLabel('Repository', { exact: true });
  await repository.fill('ACME/API');
  await expect(rows(page)).toHaveCount(30);
  for (const row of await rows(page).all()) await expect(row).toContainText('acme/api');
  await repository.fill('https://github.com/acme/web');
  await expect(rows(page)).toHaveCount(31);
  await repository.fill('nobody-here');
  await expect(page.getByRole('heading', { name: 'No sessions match' })).toBeVisible();
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(rows(page)).toHaveCount(50);
  await expect(repository).toHaveValue('');
  await expect(page).not.toHaveURL(/repository=/);
});

test('previews show text, not Markdown', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  const row = rows(page).filter({ hasText: 'Fix the flaky login test' });
  await expect(row.locator('.session-preview')).toHaveText(
    'The login test waits for sign-in now; 50 of 50 runs pass.',
  );
  await page.goto(`${seeded.server.url}/sessions/${seeded.data.transcriptSessionId}`);
  await page.getByLabel('Follow-up prompt').fill('Also check the **logout** test with `npm test`');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('link', { name: 'Sessions' }).first().click();
  await expect(row.locator('.session-preview')).toHaveText('Also check the logout test with npm test');
});
