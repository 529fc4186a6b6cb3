import { PASSWORD } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

test('first run: setup creates the owner and a workspace, then sign-out and sign-in work', async ({
  page,
  server,
}) => {
  // Without the token, the page says where setup is; with it (the URL serve printed), it is there.
  await page.goto(server.url);
  await expect(page.getByRole('heading', { name: 'Welcome to Session Desk' })).toBeVisible();
  await expect(page.getByText('opened without the link that started Session Desk')).toBeVisible();
  await expect(page.getByLabel('Your name')).toHaveCount(0);
  await page.goto(server.launchUrl);
  await expect(page.getByLabel('Your name')).toBeVisible();
  expect(page.url()).toBe(`${server.url}/`);
  await page.getByLabel('Your name').fill('Grace Hopper');
  await page.getByLabel('Email').fill('grace@example.test');
  await page.getByLabel('Password').fill('short');
  await page.getByLabel('Workspace name').fill('Compilers');
  await page.getByRole('button', { name: 'Create account and workspace' }).click();
  await expect(page.getByText('must be at least 8 characters')).toBeVisible();
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account and workspace' }).click();

  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Workspace', { exact: true })).toHaveValue(/^org_/);
  await expect(page.getByRole('heading', { name: 'No sessions yet' })).toBeVisible();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Session Desk' })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Sign in to Session Desk' })).toBeVisible();
});

test('sign in with a wrong password, then the right one', async ({ page, seeded }) => {
  await page.goto(seeded.server.url);
  await page.getByLabel('Email').fill(seeded.data.email);
  await page.getByLabel('Password').fill('not my password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong email or password');
  await page.getByLabel('Password').fill(seeded.data.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
  await expect(page.getByText('Ada Lovelace').first()).toBeVisible();
});

test('create a session, see it in the list, rename it and change its status', async ({
  page,
  seeded,
}, testInfo) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.keyboard.press('n');
  await expect(page.getByRole('heading', { name: 'New session' })).toBeVisible();
  await page
    .getByLabel('Prompt', { exact: true })
    .fill('Add a retry to the upload client. Uploads fail on flaky networks.');
  await page.getByLabel('Repository URL').fill('ftp://example.com/acme/uploads');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByText('must look like https://<host>/<owner>/<repo>')).toBeVisible();
  await page.getByLabel('Repository URL').fill('https://github.com/acme/uploads');
  await page.getByRole('button', { name: 'Start session' }).click();

  await expect(
    page.getByRole('heading', { name: 'Add a retry to the upload client', level: 1 }),
  ).toBeVisible();
  await expect(
    page.getByText('Add a retry to the upload client. Uploads fail on flaky networks.'),
  ).toBeVisible();
  await expect(page.getByRole('definition').filter({ hasText: 'acme/uploads' })).toBeVisible();

  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByLabel('Title').fill('Retry uploads');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('heading', { name: 'Retry uploads', level: 1 })).toBeVisible();
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page
    .getByRole('dialog', { name: 'Stop this session?' })
    .getByRole('button', { name: 'Stop the agent' })
    .click();
  await expect(page.locator('.session-head .badge')).toHaveText('Stopped');
  await page.getByLabel('Mark as').selectOption('failed');
  await expect(page.locator('.session-head .badge')).toHaveText('Failed');

  await page.getByRole('link', { name: 'Sessions' }).first().click();
  const row = page.getByRole('link', { name: /Retry uploads/ });
  await expect(row).toBeVisible();
  await expect(row).toContainText('Failed');
  await expect(row).toContainText('acme/uploads');
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await expect(page.getByRole('list', { name: 'Sessions' }).getByRole('listitem')).toHaveCount(1);
  await page.keyboard.press('/');
  await expect(page.getByLabel('Search titles and prompts')).toBeFocused();
  await page.screenshot({ path: testInfo.outputPath('sessions-list.png') });
});

test('read a transcript with every kind of message', async ({ page, seeded }, testInfo) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: /Fix the flaky login test/ }).click();
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(
    transcript.getByText('Fix the flaky login test. It fails on CI about once a day.'),
  ).toBeVisible();
  // Markdown: bold text and a code block.
  await expect(transcript.locator('strong', { hasText: 'login test' })).toBeVisible();
  await expect(transcript.locator('pre code')).toContainText('await page.waitForResponse');
  // Thinking is collapsed until opened.
  const thinking = transcript.locator('details.thinking');
  await expect(thinking.getByText('races the session cookie')).toBeHidden();
  await thinking.locator('summary').click();
  await expect(thinking.getByText('races the session cookie')).toBeVisible();
  // A tool use with its result; long output is folded behind "Show all".
  const read = transcript.locator('details.tool', { hasText: 'Read' });
  await read.locator('summary').click();
  await expect(read.getByLabel('Read output')).toContainText('20  line of the login test');
  await expect(read.getByLabel('Read output')).not.toContainText('21  line');
  await read.getByRole('button', { name: 'Show all (60 lines)' }).click();
  await expect(read.getByLabel('Read output')).toContainText('60  line of the login test');
  const bash = transcript.locator('details.tool', { hasText: 'Bash' });
  await expect(bash.locator('.tool-state')).toHaveText('error');
  // A failed call stands out from the finished ones: not the same grey as "done".
  const colorOf = (tool: typeof bash) =>
    tool.locator('.tool-state').evaluate((el) => getComputedStyle(el).color);
  await expect(read.locator('.tool-state')).toHaveText('done');
  expect(await colorOf(bash)).not.toBe(await colorOf(read));
  await expect(transcript.getByRole('status')).toContainText('Finished');
  // Tasks, and the metadata. The run is over, so what it left open is not done.
  const tasks = page.getByRole('list', { name: 'Tasks' });
  await expect(tasks.getByRole('listitem')).toHaveCount(3);
  await expect(tasks).toContainText('(Done)');
  await expect(tasks.getByText('(Not done)')).toHaveCount(2);
  await expect(tasks).not.toContainText('(In progress)');
  await expect(page.getByRole('link', { name: '#42 Open' })).toHaveAttribute(
    'href',
    'https://github.com/acme/web/pull/42',
  );
  await expect(page.getByText('agent/fix-flaky-login-test')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('session.png'), fullPage: true });
});

test('create an API key, use it from a script, revoke it and see 401', async ({ page, seeded }, testInfo) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'API keys' }).click();
  await expect(page.getByRole('heading', { name: 'No API keys' })).toBeVisible();
  await page.getByLabel('Label').fill('release script');
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByText('Copy it now: you won’t see it again.')).toBeVisible();
  const key = (await page.getByLabel('New API key', { exact: true }).textContent()) ?? '';
  expect(key).toMatch(/^sdk_[A-Za-z0-9_-]{43}$/);
  await page.screenshot({ path: testInfo.outputPath('api-keys.png') });

  const list = await fetch(`${seeded.server.url}/api/sessions`, { headers: { 'x-api-key': key } });
  expect(list.status).toBe(200);
  expect(((await list.json()) as { sessions: unknown[] }).sessions).toHaveLength(1);

  await page.getByRole('button', { name: 'I have stored it' }).click();
  await expect(page.getByLabel('New API key', { exact: true })).toBeHidden();
  const row = page.getByRole('row', { name: /release script/ });
  await expect(row).toContainText(key.slice(0, 12));
  await expect(row).not.toContainText(key);
  await row.getByRole('button', { name: /Revoke/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByRole('heading', { name: 'No API keys' })).toBeVisible();

  const after = await fetch(`${seeded.server.url}/api/sessions`, { headers: { 'x-api-key': key } });
  expect(after.status).toBe(401);
});

test('the API page shows curl examples for this workspace', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'API', exact: true }).click();
  await expect(page.getByText(seeded.server.url, { exact: true })).toBeVisible();
  for (const header of [
    'x-api-key: $SESSIONDESK_KEY',
    '?apiKey=$SESSIONDESK_KEY',
    'Authorization: Bearer $SESSIONDESK_KEY',
  ]) {
    await expect(page.getByText(header).first()).toBeVisible();
  }
  await expect(page.getByText(`"organizationId":"${seeded.data.organizationId}"`)).toBeVisible();
});

test('switch workspace, and add and remove a member', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await expect(page.getByRole('link', { name: /Fix the flaky login test/ })).toBeVisible();
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Side project' });
  await expect(page.getByRole('heading', { name: 'No sessions yet' })).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Workspace', { exact: true })).toHaveValue(seeded.data.secondOrganizationId);

  await page.getByRole('link', { name: 'Members' }).click();
  await page.getByLabel('Email').fill('bob@example.test');
  await page.getByLabel('Create a new local account for this person').check();
  await page.getByLabel('Name').fill('Bob Builder');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add member' }).click();
  const members = page.getByRole('list', { name: 'Members of Side project' });
  const bob = members.getByRole('listitem').filter({ hasText: 'bob@example.test' });
  await expect(bob).toContainText('Bob Builder');
  await members.getByRole('button', { name: 'Remove Bob Builder' }).click();
  await page
    .getByRole('dialog', { name: 'Remove this member?' })
    .getByRole('button', { name: 'Remove member' })
    .click();
  await expect(bob).toBeHidden();
});

test('an expired sign-in asks again without losing what was typed', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('A long prompt I do not want to type twice.');
  // End this sign-in on the server, as expiry would.
  const cookie = (await page.context().cookies()).find((c) => c.name === '__session');
  const out = await fetch(`${seeded.server.url}/api/auth/sign-out`, {
    method: 'POST',
    headers: { cookie: `__session=${cookie?.value ?? ''}` },
  });
  expect(out.status).toBe(204);
  await page.getByRole('button', { name: 'Start session' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your sign-in has expired' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Password').fill(seeded.data.password);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByLabel('Prompt', { exact: true })).toHaveValue(
    'A long prompt I do not want to type twice.',
  );
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(
    page.getByRole('heading', { name: 'A long prompt I do not want to type twice', level: 1 }),
  ).toBeVisible();
});

test('works at 900 px wide and is usable by keyboard alone', async ({ page, seeded }, testInfo) => {
  await page.setViewportSize({ width: 900, height: 800 });
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  // Every form control has an accessible name.
  for (const control of await page.locator('input, select, textarea, button').all()) {
    const name = await control.evaluate((el) => {
      const labelled = (el as HTMLInputElement).labels?.length ?? 0;
      return (
        labelled > 0 ||
        el.getAttribute('aria-label') ||
        (el.textContent ?? '').trim() ||
        el.getAttribute('placeholder')
      );
    });
    expect(name).toBeTruthy();
  }
  // Tab to the first session and open it with Enter.
  const link = page.getByRole('link', { name: /Fix the flaky login test/ });
  for (let i = 0; i < 40 && !(await link.evaluate((el) => el === document.activeElement)); i += 1) {
    await page.keyboard.press('Tab');
  }
  await expect(link).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Fix the flaky login test', level: 1 })).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: testInfo.outputPath('session-900.png'), fullPage: true });

  // Light and dark follow the system.
  const background = () =>
    page.evaluate(() => getComputedStyle(document.body.parentElement!).backgroundColor);
  await page.emulateMedia({ colorScheme: 'light' });
  const light = await background();
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await background();
  expect(light).toBe('rgb(247, 247, 248)');
  expect(dark).toBe('rgb(17, 17, 20)');
  await page.screenshot({ path: testInfo.outputPath('session-900-dark.png') });
});

test('? shows the keyboard shortcuts, wherever one is not typing; Escape closes them', async ({
  page,
  seeded,
}) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(help).toBeHidden();
  await page.keyboard.press('?');
  await expect(help).toBeVisible();
  // Each shortcut the pages listen for, with what it does.
  for (const [group, key, what] of [
    ['Sessions', 'n', 'New session'],
    ['Sessions', '/', 'Search the sessions'],
    ['Inbox', 'j', 'The next request'],
    ['Inbox', 'a', 'Allow once'],
    ['Anywhere', '?', 'Show these shortcuts'],
  ]) {
    const row = help.getByRole('region', { name: group! }).locator('.shortcut', { hasText: what! });
    await expect(row.locator('kbd')).toHaveText(key!);
  }
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();
  // Typed in a field, "?" is a character.
  const search = page.getByLabel('Search titles and prompts');
  await search.fill('');
  await search.press('?');
  await expect(search).toHaveValue('?');
  await expect(help).toBeHidden();
  // From the sidebar too, on any page; its shortcuts still work once it is closed.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: /Keyboard shortcuts/u }).click();
  await expect(help).toBeVisible();
  await help.getByRole('button', { name: 'Close' }).click();
  await expect(help).toBeHidden();
  await page.getByRole('link', { name: 'Sessions', exact: true }).first().click();
  await page.keyboard.press('n');
  await expect(page).toHaveURL(/\/new$/u);
});
