// Settings › Approvals in a real browser: the rules started from the template, a rule added,
// worded and moved up, what each would have decided of the workspace's latest requests (the demo
// agent's, made in a workspace that asks), saved and read back; and the Inbox's offer, after
// "Allow for this session", to make the request a rule.
import type { APIRequestContext, Page } from '@playwright/test';
import { APPROVAL_RULES_TEMPLATE, type Approval, type ApprovalRule } from '../../src-shared/index.js';
import { expect, screenshotsInBothThemes, signIn, test } from './fixtures.js';

/** Sets the workspace's agent as its owner would, through the dashboard's own endpoint. */
async function setAgent(page: Page, base: string, org: string, settings: Record<string, unknown>) {
  const put = await page.request.put(`${base}/api/workspaces/${org}/agent`, {
    headers: { origin: base },
    data: settings,
  });
  expect(put.status(), await put.text()).toBe(200);
}

async function startSession(request: APIRequestContext, base: string, org: string): Promise<string> {
  const created = await request.post(`${base}/api/sessions`, {
    headers: { origin: base },
    data: { organizationId: org, initialMessage: 'Add retries to the upload client' },
  });
  expect(created.status(), await created.text()).toBe(201);
  return ((await created.json()) as { session: { id: string } }).session.id;
}

/** The session's one pending request, once its agent asks. */
async function nextRequest(request: APIRequestContext, base: string, org: string, sessionId: string) {
  let found: Approval | undefined;
  await expect
    .poll(
      async () => {
        const listed = await request.get(
          `${base}/api/approvals?organizationId=${org}&sessionId=${sessionId}`,
        );
        found = ((await listed.json()) as { approvals: Approval[] }).approvals[0];
        return found !== undefined;
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return found as Approval;
}

async function savedRules(page: Page, base: string, org: string): Promise<ApprovalRule[] | undefined> {
  const got = await page.request.get(`${base}/api/workspaces/${org}/agent`);
  return ((await got.json()) as { settings: { approvalRules?: ApprovalRule[] } }).settings.approvalRules;
}

test('Settings › Approvals: the template, a rule added and moved up, its preview, saved', async ({
  page,
  live,
}) => {
  test.setTimeout(120_000);
  const base = live.server.url;
  const org = live.data.organizationId;
  await signIn(page, base, live.data.email, live.data.password);
  // Three requests to try the rules on: the demo agent's edit, note and commit, each allowed.
  await setAgent(page, base, org, { agent: 'demo', approvals: 'ask' });
  const sessionId = await startSession(page.request, base, org);
  for (let asked = 0; asked < 3; asked += 1) {
    const waiting = await nextRequest(page.request, base, org, sessionId);
    const decided = await page.request.post(`${base}/api/approvals/${waiting.id}`, {
      headers: { origin: base },
      data: { decision: 'allow_once' },
    });
    expect(decided.status(), await decided.text()).toBe(200);
  }

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
  await expect(page.getByRole('heading', { name: 'Approvals', level: 1 })).toBeVisible();
  await expect(page.getByText('No rules: every request is decided as Settings › Agent says.')).toBeVisible();
  await page.getByRole('button', { name: 'Start from the template' }).click();
  const rules = page.getByRole('list', { name: 'Approval rules' }).getByRole('listitem');
  await expect(rules).toHaveCount(APPROVAL_RULES_TEMPLATE.length);
  await expect(page.getByLabel('Rule 3 kind')).toHaveValue('edit');
  await expect(page.getByLabel('Rule 3 decision')).toHaveValue('allow');
  await expect(page.getByLabel('Rule 4 kind')).toHaveValue('execute');
  await expect(page.getByLabel('Rule 4 decision')).toHaveValue('ask');
  // What each would have decided of the three requests.
  await expect(rules.nth(2)).toContainText('Would have decided 2 of the last 3 requests');
  await expect(rules.nth(3)).toContainText('Would have decided 1 of the last 3 requests');
  await expect(rules.nth(0)).toContainText('Would have decided 0 of the last 3 requests');
  await expect(page.getByText('Of the last 3 requests, every one matches a rule.')).toBeVisible();

  // A rule of its own: reject the commit. Added last, it decides nothing (the one asking about
  // every command comes first); moved up above it, it decides the commit.
  await page.getByRole('button', { name: 'Add a rule' }).click();
  await expect(rules).toHaveCount(7);
  await page.getByLabel('Rule 7 decision').selectOption('reject');
  await page.getByLabel('Rule 7 pattern').fill('git commit*');
  await expect(rules.nth(6)).toContainText('Would have decided 0 of the last 3 requests');
  for (let n = 7; n > 4; n -= 1) await page.getByRole('button', { name: `Move rule ${n} up` }).click();
  await expect(page.getByLabel('Rule 4 pattern')).toHaveValue('git commit*');
  await expect(rules.nth(3)).toContainText('Would have decided 1 of the last 3 requests');
  await expect(rules.nth(4)).toContainText('Would have decided 0 of the last 3 requests');
  // A rule that names nothing is refused before it is sent, saying why.
  await page.getByRole('button', { name: 'Add a rule' }).click();
  await page.getByLabel('Rule 8 kind').selectOption('');
  await expect(rules.nth(7).getByRole('alert')).toContainText('a rule names a kind, a pattern or both');
  await expect(page.getByRole('button', { name: 'Save rules' })).toBeDisabled();
  await page.getByRole('button', { name: 'Remove rule 8' }).click();

  await screenshotsInBothThemes(page, 'approval-rules');
  await page.getByRole('button', { name: 'Save rules' }).click();
  await expect(page.getByText('Saved. Runs started from now on follow these rules.')).toBeVisible();
  const expected: ApprovalRule[] = [
    ...APPROVAL_RULES_TEMPLATE.slice(0, 3),
    { kind: 'execute', pattern: 'git commit*', decision: 'reject' },
    ...APPROVAL_RULES_TEMPLATE.slice(3),
  ];
  expect(await savedRules(page, base, org)).toEqual(expected);
  await page.reload();
  await expect(rules).toHaveCount(7);
  await expect(page.getByLabel('Rule 4 pattern')).toHaveValue('git commit*');

  // Settings › Agent saves its own fields and keeps the rules.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agent' }).click();
  await expect(page.getByText('7 approval rules decide first')).toBeVisible();
  await page.getByLabel(/Let agents act/).check();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();
  expect(await savedRules(page, base, org)).toEqual(expected);
});

test('the Inbox: "Allow for this session" offers a rule, drafted first in Settings › Approvals', async ({
  page,
  live,
}) => {
  test.setTimeout(120_000);
  const base = live.server.url;
  const org = live.data.organizationId;
  await signIn(page, base, live.data.email, live.data.password);
  await setAgent(page, base, org, {
    agent: 'demo',
    approvals: 'ask',
    approvalRules: [{ kind: 'execute', decision: 'ask' }],
  });
  await startSession(page.request, base, org);

  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Inbox, 1 waiting' })).toBeVisible({ timeout: 30_000 });
  await nav.getByRole('link', { name: /^Inbox/ }).click();
  const request = page.getByRole('list', { name: 'Requests' }).getByRole('article');
  await expect(request.getByRole('heading')).toHaveText('Edit src/config.js');
  await request.getByRole('button', { name: /^Allow for this session/u }).click();

  const offer = page.getByRole('region', { name: /^Allowed for this session/u });
  await expect(offer).toContainText('Edit src/config.js');
  const add = offer.getByRole('link', { name: 'Add a rule: allow edit src/config.js' });
  await expect(add).toBeVisible();
  await screenshotsInBothThemes(page, 'rule-offer');
  await add.click();

  await expect(page.getByRole('heading', { name: 'Approvals', level: 1 })).toBeVisible();
  const rules = page.getByRole('list', { name: 'Approval rules' }).getByRole('listitem');
  await expect(rules).toHaveCount(2);
  await expect(rules.nth(0)).toContainText('From the Inbox: a new rule, first in the list, not saved yet.');
  await expect(page.getByLabel('Rule 1 decision')).toHaveValue('allow');
  await expect(page.getByLabel('Rule 1 kind')).toHaveValue('edit');
  await expect(page.getByLabel('Rule 1 pattern')).toHaveValue('src/config.js');
  await expect(page.getByLabel('Rule 2 kind')).toHaveValue('execute');
  // The request just allowed is among those the preview counts (the commit, asked since, may be too).
  await expect(rules.nth(0)).toContainText(
    /Would have decided 1 of (the one request so far|the last 2 requests):\s*Edit src\/config\.js/u,
  );
  await screenshotsInBothThemes(page, 'rule-drafted');
  await page.getByRole('button', { name: 'Save rules' }).click();
  await expect(page.getByText('Saved. Runs started from now on follow these rules.')).toBeVisible();
  await expect(rules.nth(0)).not.toContainText('From the Inbox');
  expect(await savedRules(page, base, org)).toEqual([
    { kind: 'edit', pattern: 'src/config.js', decision: 'allow' },
    { kind: 'execute', decision: 'ask' },
  ]);
  expect(page.url()).toBe(`${base}/settings/approvals`);

  // The next session's edit is decided by the rule: in its transcript, not in the Inbox.
  const next = await startSession(page.request, base, org);
  await page.goto(`${base}/sessions/${next}`);
  const transcript = page.getByRole('region', { name: 'Conversation' });
  const decided = transcript.getByRole('article', { name: 'Request: Edit src/config.js' });
  await expect(decided).toContainText('Allowed once by rule 1', { timeout: 30_000 });
  await expect(transcript).toContainText(
    "Allow once: decided by the workspace's approval rule 1 (allow edit `src/config.js`).",
  );
  await expect(decided.getByRole('button')).toHaveCount(0);
  await screenshotsInBothThemes(page, 'rule-in-transcript');
});
