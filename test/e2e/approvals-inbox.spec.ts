// The Inbox of what agents ask before they act, in a real browser: the real Claude Code CLI
// (against the scripted model server) asks through its permission prompts in a workspace set to
// ask, and the person decides in the Inbox (with the mouse and with the keys) and sees the
// request in place in the session's transcript.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { claudeCodeEnv, CLAUDE_CODE_VARIABLES } from '../helpers/claude-code-cli.js';
import { seedStorage } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';
import { newPlace, removePlace, seedPlace, servePlace } from './backend.js';
import { expect, screenshotsInBothThemes, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

const claude = agentCliTool('claude');

/** A model turn that runs `command` with Claude Code's Bash tool. */
const bash = (command: string) => ({
  blocks: [{ type: 'tool_use' as const, name: 'Bash', input: { command, description: 'Run a command' } }],
});
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

const SCRIPT = [
  { match: 'WRITE-IT', turns: [bash('echo done > allowed.txt'), say('Wrote it.')] },
  { match: 'SKIP-IT', turns: [bash('echo nope > rejected.txt'), say('Left it alone.')] },
];

/** What the page's Notification API was asked and shown, seen through a wrapper of the real one. */
async function watchNotifications(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const Real = window.Notification;
    const seen = { asked: 0, shown: [] as { title: string; body: string; tag: string }[] };
    class Watched extends Real {
      static override get permission() {
        return Real.permission;
      }
      static override requestPermission() {
        seen.asked += 1;
        return Real.requestPermission();
      }
      constructor(title: string, options?: NotificationOptions) {
        seen.shown.push({ title, body: options?.body ?? '', tag: options?.tag ?? '' });
        super(title, options);
      }
    }
    Object.assign(window, { Notification: Watched, seenNotifications: seen });
  });
}

const seenNotifications = (page: Page) =>
  page.evaluate(
    () =>
      (
        window as unknown as {
          seenNotifications: { asked: number; shown: { title: string; body: string }[] };
        }
      ).seenNotifications,
  );

test('the Inbox: what Claude Code asks waits there with a count; Allow runs the command, Reject does not', async ({
  page,
}) => {
  requireTools(claude);
  test.setTimeout(240_000);
  const root = tempDir('sessiondesk-e2e-inbox-');
  const place = await newPlace();
  const { dataDir } = place;
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const model = await startScriptedAnthropicServer(SCRIPT);
  const stops: (() => Promise<unknown>)[] = [() => model.close()];
  try {
    const data = await seedPlace(place, (storage) => seedStorage(storage));
    const cliEnv = claudeCodeEnv(home, model.url);
    const server = await servePlace(place, ['--log-level', 'warn'], {
      ...Object.fromEntries(CLAUDE_CODE_VARIABLES.map((name) => [name, cliEnv[name]])),
      HOME: home,
      SESSIONDESK_CLAUDE_BIN: claude.path!,
      SESSIONDESK_AGENT_ENV: CLAUDE_CODE_VARIABLES.join(','),
    });
    stops.push(() => server.stop());
    const base = server.url;
    await watchNotifications(page);
    await signIn(page, base, data.email, data.password);

    // Settings › Notifications: the browser is asked on the click, never when a page loads.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notifications' }).click();
    await expect(page.getByRole('heading', { name: 'Notifications', level: 1 })).toBeVisible();
    await expect(page.getByText('Desktop notifications: off')).toBeVisible();
    expect((await seenNotifications(page)).asked).toBe(0);
    await page.getByRole('button', { name: 'Turn on notifications' }).click();
    await expect.poll(async () => (await seenNotifications(page)).asked).toBe(1);
    // The person allows them (as in the browser's prompt); the next click turns them on.
    await page.context().grantPermissions(['notifications'], { origin: base });
    await page.reload();
    await expect(page.getByText('This browser shows them.')).toBeVisible();
    await page.getByRole('button', { name: 'Turn on notifications' }).click();
    await expect(page.getByText('Desktop notifications: on')).toBeVisible();
    // Sounds stay off until turned on, and are remembered by this browser.
    await expect(page.getByLabel('Play a sound when an agent needs you')).not.toBeChecked();
    await expect(page.getByLabel('Play a sound when a run finishes')).not.toBeChecked();
    await page.getByLabel('Play a sound when a run finishes').check();
    await page.reload();
    await expect(page.getByLabel('Play a sound when a run finishes')).toBeChecked();
    await expect(page.getByLabel('Play a sound when an agent needs you')).not.toBeChecked();
    expect((await seenNotifications(page)).asked).toBe(0);

    // Settings › Agent: Claude Code, asking first, saved with the one Save.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agent' }).click();
    await page.getByLabel(/Claude Code/).check();
    await page.getByLabel(/Ask first/).check();
    await page.getByLabel('Time to decide (seconds)').fill('900');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();
    const settings = await page.request.get(`${base}/api/workspaces/${data.organizationId}/agent`);
    expect((await settings.json()).settings).toMatchObject({
      agent: 'claude-code',
      approvals: 'ask',
      approvalTimeoutSeconds: 900,
    });

    const sessionIds: string[] = [];
    for (const prompt of ['Write the file. WRITE-IT', 'Skip the file. SKIP-IT']) {
      const created = await page.request.post(`${base}/api/sessions`, {
        headers: { origin: base },
        data: { organizationId: data.organizationId, initialMessage: prompt },
      });
      expect(created.status(), await created.text()).toBe(201);
      sessionIds.push(((await created.json()) as { session: { id: string } }).session.id);
    }
    const [allowedId, rejectedId] = sessionIds as [string, string];
    const allowedFile = join(sandboxPath(defaultSandboxRoot(dataDir), allowedId), 'allowed.txt');
    const rejectedFile = join(sandboxPath(defaultSandboxRoot(dataDir), rejectedId), 'rejected.txt');

    // Both requests arrive live: the count in the navigation, and a notification each.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Inbox, 2 waiting' })).toBeVisible({ timeout: 90_000 });
    await expect
      .poll(async () => (await seenNotifications(page)).shown.map((n) => `${n.title}: ${n.body}`).sort())
      .toEqual([
        'Claude Code needs you: echo done > allowed.txt',
        'Claude Code needs you: echo nope > rejected.txt',
      ]);

    await nav.getByRole('link', { name: /^Inbox/ }).click();
    const requests = page.getByRole('list', { name: 'Requests' }).getByRole('article');
    await expect(requests).toHaveCount(2);
    const allowCard = requests.filter({ hasText: 'echo done > allowed.txt' });
    const rejectCard = requests.filter({ hasText: 'echo nope > rejected.txt' });
    await expect(allowCard.getByLabel('What Bash would do')).toHaveText(
      '$ echo done > allowed.txt\n\nRun a command',
    );
    await expect(allowCard).toContainText('Claude Code');
    await expect(allowCard.getByRole('link', { name: 'Write the file' })).toBeVisible();
    await expect(allowCard).toContainText(/1[45] min left/u);
    await expect(rejectCard.getByRole('link', { name: 'Skip the file' })).toBeVisible();

    await screenshotsInBothThemes(page, 'inbox');

    // The session page shows the same request in place, with its choices, and says it needs you.
    await allowCard.getByRole('link', { name: 'Write the file' }).click();
    const head = page.locator('.session-head');
    await expect(head.getByText('Needs you')).toBeVisible();
    const inPlace = page.getByRole('article', { name: 'Request: echo done > allowed.txt' });
    await expect(inPlace.getByLabel('What Bash would do')).toHaveText(
      '$ echo done > allowed.txt\n\nRun a command',
    );
    await expect(inPlace.getByRole('button', { name: 'Allow once' })).toBeVisible();
    await expect(inPlace.getByRole('button', { name: 'Reject' })).toBeVisible();
    await screenshotsInBothThemes(page, 'session-request');
    await page.goBack();

    // Allowed in the Inbox: it leaves the list, and the command runs. The server's answer to the
    // click is held back in the browser until the next request has been chosen, as on a busy
    // machine: the live event takes the allowed one off the list first.
    expect(existsSync(allowedFile)).toBe(false);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let answered: Promise<void> = Promise.resolve();
    const decisions = '**/api/approvals/*';
    await page.route(decisions, (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      answered = (async () => {
        const answer = await route.fetch();
        await held;
        await route.fulfill({ response: answer });
      })();
      return answered;
    });
    await allowCard.getByRole('button', { name: 'Allow once' }).click();
    await expect(requests).toHaveCount(1);
    await expect(nav.getByRole('link', { name: 'Inbox, 1 waiting' })).toBeVisible();
    await expect.poll(() => existsSync(allowedFile), { timeout: 60_000 }).toBe(true);

    // Rejected with the keys, with a message, while the first answer is still on its way: the
    // command never runs.
    await page.keyboard.press('r');
    const message = page.getByLabel('Message to the agent (optional)');
    await expect(message).toBeFocused();
    release();
    await answered;
    await page.unroute(decisions);
    await message.fill('Not in this folder.');
    await message.press('Enter');
    await expect(page.getByText('Nothing waiting for you')).toBeVisible();
    await expect(nav.getByRole('link', { name: 'Inbox', exact: true })).toBeVisible();

    // Each session's transcript tells what became of its request, and its run ends.
    await page.goto(`${base}/sessions/${rejectedId}`);
    const transcript = page.getByRole('region', { name: 'Conversation' });
    await expect(
      transcript.getByRole('article', { name: 'Request: echo nope > rejected.txt' }),
    ).toContainText('Rejected');
    await expect(transcript).toContainText('Message to the agent: Not in this folder.');
    await expect(transcript.getByRole('status').filter({ hasText: 'Left it alone.' })).toContainText(
      'Finished',
      {
        timeout: 60_000,
      },
    );
    expect(existsSync(rejectedFile)).toBe(false);
    await page.goto(`${base}/sessions/${allowedId}`);
    await expect(transcript.getByRole('article', { name: 'Request: echo done > allowed.txt' })).toContainText(
      'Allowed once',
    );
    await expect(transcript.getByRole('status').filter({ hasText: 'Wrote it.' })).toContainText('Finished', {
      timeout: 60_000,
    });
    await expect(page.locator('.session-head').getByText('Needs you')).toHaveCount(0);
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    removePlace(place);
  }
});

test('Settings › Agent: asking first is saved with the agent, and the network list keeps it', async ({
  page,
  seeded,
}) => {
  const base = seeded.server.url;
  await signIn(page, base, seeded.data.email, seeded.data.password);
  await page.goto(`${base}/settings/agent`);
  // Off until an owner asks for it.
  await expect(page.getByLabel(/Let agents act/)).toBeChecked();
  await expect(page.getByLabel('Time to decide (seconds)')).toHaveCount(0);
  await page.getByLabel(/Ask first/).check();
  await page.getByLabel('Time to decide (seconds)').fill('2');
  await page.getByRole('button', { name: 'Save' }).click();
  // The server's refusal shows at the field.
  await expect(page.getByRole('alert')).toHaveText('must be at least 5');
  await page.getByLabel('Time to decide (seconds)').fill('120');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();

  await page.getByLabel('Allowed hosts').fill('example.com');
  await page.getByRole('button', { name: 'Limit to these hosts' }).click();
  await expect(page.getByRole('list', { name: 'Hosts agents may reach' })).toContainText('example.com');
  const saved = await page.request.get(`${base}/api/workspaces/${seeded.data.organizationId}/agent`);
  expect((await saved.json()).settings).toMatchObject({
    approvals: 'ask',
    approvalTimeoutSeconds: 120,
    allowedHosts: ['example.com'],
  });
  await page.reload();
  await expect(page.getByLabel(/Ask first/)).toBeChecked();
  await expect(page.getByLabel('Time to decide (seconds)')).toHaveValue('120');
});
