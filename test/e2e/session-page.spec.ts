import { expect, signIn, test } from './fixtures.js';

test('Stop asks first, then ends the run with a neutral Stopped result', async ({ page, crowded }) => {
  await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
  await page.goto(`${crowded.server.url}/sessions/${crowded.data.activeSessionId}`);
  const transcript = page.getByRole('list', { name: 'Transcript' });
  const bash = transcript.locator('details.tool', { hasText: 'Bash' });
  await expect(bash.locator('.tool-state')).toHaveText('running…');
  await expect(page.locator('.session-head .badge')).toHaveText('Active');

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Stop this session?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.locator('.session-head .badge')).toHaveText('Active');

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await dialog.getByRole('button', { name: 'Stop the agent' }).click();
  const result = transcript.locator('.result');
  await expect(result).toContainText('Stopped');
  await expect(result).toContainText('Stopped by Ada Lovelace.');
  await expect(result).toHaveClass(/result-stopped/);
  await expect(result).not.toContainText('Finished');
  // A stop is neither a success nor a failure: a neutral badge, here and in the list.
  await expect(page.locator('.session-head .badge')).toHaveText('Stopped');
  await expect(page.locator('.session-head .badge')).toHaveClass(/badge-stopped/);
  await expect(page.getByRole('button', { name: 'Stop', exact: true })).toBeHidden();
  // What the run left open is shown as over.
  await expect(bash.locator('.tool-state')).toHaveText('ended without a result');
  await expect(transcript).not.toContainText('running…');
  await expect(page.getByText('The agent is working…')).toBeHidden();
  const tasks = page.getByRole('list', { name: 'Tasks' });
  await expect(tasks).toContainText('(Done)');
  await expect(tasks.getByText('(Not done)')).toHaveCount(2);
  await expect(tasks).not.toContainText('(Pending)');
  await expect(tasks).not.toContainText('(In progress)');

  await page.getByRole('link', { name: 'Sessions' }).first().click();
  const row = page.getByRole('link', { name: /Migrate the build to the new runner/ });
  await expect(row.locator('.badge').first()).toHaveText('Stopped');
  await expect(row).not.toContainText('Completed');

  // Beside its Stopped badge, the status control says Stopped too, and offers what a person
  // decides of a stopped run: its work is done (Completed), or it failed.
  await row.click();
  const status = page.getByLabel('Mark as');
  await expect(status).toHaveValue('stopped');
  await expect(status.locator('option')).toHaveText(['Stopped', 'Completed', 'Failed']);
  await status.selectOption('completed');
  await expect(page.locator('.session-head .badge')).toHaveText('Completed');
  await expect(status).toHaveValue('completed');
  await expect(status.locator('option')).toHaveText(['Completed', 'Failed']);
});

test('an empty prompt is refused by the form; the demo agent is named and offers no models', async ({
  page,
  seeded,
}) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await expect(
    page.getByText('Runs with the demo agent: a simulated run, no real agent or model.'),
  ).toBeVisible();
  // The demo runs no model: nothing to choose, and no Claude model offered.
  await expect(page.getByLabel('Model')).toHaveCount(0);
  await expect(page.locator('option', { hasText: 'claude' })).toHaveCount(0);
  await page.getByLabel('Prompt', { exact: true }).fill('   \n  ');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByText('Write a prompt: the agent needs something to work on.')).toBeVisible();
  await expect(page.getByLabel('Prompt', { exact: true })).toBeFocused();
  await expect(page).toHaveURL(/\/new$/);
  const list = await page.request.get(
    `${seeded.server.url}/api/sessions?organizationId=${seeded.data.organizationId}`,
  );
  expect(((await list.json()) as { sessions: unknown[] }).sessions).toHaveLength(1);

  await page.getByLabel('Prompt', { exact: true }).fill('Document the retry settings');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { name: 'Document the retry settings', level: 1 })).toBeVisible();
  await expect(page.getByRole('definition').filter({ hasText: /^Simulated$/u })).toBeVisible();
});

test('a session that does not exist links back to the sessions, with no retry', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.goto(`${seeded.server.url}/sessions/ses_doesnotexist0000000000`);
  await expect(page.getByRole('heading', { name: 'Session not found' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Try again' })).toHaveCount(0);
  await page.getByRole('link', { name: 'Back to sessions' }).click();
  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
  await page.goto(`${seeded.server.url}/no/such/page`);
  await page.getByRole('link', { name: 'Back to sessions' }).click();
  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
});

test('task updates are folded in the transcript, not raw TodoWrite rows', async ({ page, live }) => {
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('Tidy the config loader');
  await page.getByRole('button', { name: 'Start session' }).click();
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(transcript.locator('.result')).toContainText('Finished', { timeout: 30_000 });
  await expect(transcript.locator('.tool-name', { hasText: 'TodoWrite' })).toHaveCount(0);
  const updates = transcript.locator('details.todo-update');
  expect(await updates.count()).toBeGreaterThan(0);
  await expect(updates.last()).toContainText('of');
  await expect(updates.last().getByRole('list', { name: 'Task update' })).toBeHidden();
  await updates.last().locator('summary').click();
  await expect(updates.last().getByRole('list', { name: 'Task update' })).toBeVisible();
});

test('a prompt being written survives a reload of the new-session page, and is gone once started', async ({
  page,
  live,
}) => {
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('A long prompt I would rather not type twice');
  await page.getByLabel('Repository URL').fill('https://github.com/acme/widgets');
  await page.reload();
  await expect(page.getByLabel('Prompt', { exact: true })).toHaveValue(
    'A long prompt I would rather not type twice',
  );
  await expect(page.getByLabel('Repository URL')).toHaveValue('https://github.com/acme/widgets');
  await page.getByLabel('Repository URL').fill('');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(
    page.getByRole('heading', { name: 'A long prompt I would rather not type twice' }),
  ).toBeVisible();
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await expect(page.getByLabel('Prompt', { exact: true })).toHaveValue('');
});

test('the new-session form opens at once: its code is fetched ahead, however slowly it arrives', async ({
  page,
  live,
}) => {
  // A slow network for the page's code: before, the list stayed on screen until it arrived, and
  // what was typed meanwhile went into the list's search box.
  await page.route(/\/assets\/NewSessionPage-[^/]*\.js$/, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 800));
    await route.continue();
  });
  const fetchedAhead = page.waitForResponse(/\/assets\/NewSessionPage-[^/]*\.js$/);
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await fetchedAhead;
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await expect(page.getByRole('heading', { name: 'New session', level: 1 })).toBeVisible();
  await page.getByLabel('Prompt', { exact: true }).fill('Tidy up the retry helper');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { name: 'Tidy up the retry helper', level: 1 })).toBeVisible();
});
