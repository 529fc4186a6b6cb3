import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import { PASSWORD } from '../helpers/server.js';
import { newPlace, removePlace, servePlace } from './backend.js';
import { expect, signIn, test } from './fixtures.js';

test('a team server offers no demo: its first-run page is setup alone', async ({ page, server, backend }) => {
  test.skip(backend !== 'team-server', 'a desktop offers the demo: the test below');
  await page.goto(server.launchUrl);
  await expect(page.getByRole('heading', { name: 'Welcome to Session Desk' })).toBeVisible();
  await expect(
    page.getByText('Create the owner account for this server and a first workspace.'),
  ).toBeVisible();
  await expect(page.getByRole('button', { name: 'Create account and workspace' })).toBeVisible();
  await expect(page.getByRole('button', { name: /demo workspace/u })).toHaveCount(0);
});

test('exploring the demo leaves creating an own account possible', async ({ page, server, backend }) => {
  test.skip(backend === 'team-server', 'the demo lives in a data directory: a team server has none');
  await page.goto(server.launchUrl);
  await page.getByRole('button', { name: 'Explore the demo workspace' }).click();
  // Making the demo's accounts and 40 sessions takes a while on a busy machine.
  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible({ timeout: 60_000 });
  await expect(
    page.getByText('You are exploring the demo. Sign out to create your own account.'),
  ).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();

  // Signed out, the demo's sign-in comes first, and setup is one click away.
  await expect(page.getByRole('heading', { name: 'Sign in to Session Desk' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign in to the demo workspace' })).toBeVisible();
  await page.getByRole('button', { name: 'Create your own owner account' }).click();
  await expect(page.getByRole('heading', { name: 'Welcome to Session Desk' })).toBeVisible();
  await page.getByLabel('Your name').fill('Grace Hopper');
  await page.getByLabel('Email').fill('grace@example.test');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByLabel('Workspace name').fill('Compilers');
  await page.getByRole('button', { name: 'Create account and workspace' }).click();
  await expect(page.getByRole('heading', { name: 'No sessions yet' })).toBeVisible();
  await expect(page.getByText('You are exploring the demo')).toBeHidden();

  // Now an own account exists: signed out, it is a plain sign-in screen.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Session Desk' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Create your own owner account' })).toHaveCount(0);
});

test('first-run setup offers the agent CLIs installed here and gives the workspace the chosen one', async ({
  page,
}) => {
  const bin = installRecordedClis(mkdtempSync(join(tmpdir(), 'e2e-setup-clis-')));
  const place = await newPlace();
  // Only Codex and Gemini CLI are installed for this server.
  rmSync(join(bin, 'claude'));
  // The recorded CLIs are scripts run by this Node: its folder is on PATH, as a real install's is,
  // so that the agents' sandbox, where versions are asked, holds it too.
  const server = await servePlace(place, ['--log-level', 'warn'], {
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
  });
  try {
    await page.goto(server.launchUrl);
    await expect(page.getByRole('heading', { name: 'Welcome to Session Desk' })).toBeVisible();
    const agents = page.getByRole('group', { name: 'Agent for this workspace' });
    await expect(agents.getByLabel(/Claude Code/)).toBeDisabled();
    await expect(agents.getByText('(not installed: npm install -g @anthropic-ai/claude-code)')).toBeVisible();
    // The first CLI found is offered first; the demo agent says what it is.
    await expect(agents.getByLabel(/Codex/)).toBeChecked();
    await expect(agents.getByText('(version 0.169.0)')).toBeVisible();
    await expect(agents.getByText('(made-up runs; changes nothing)')).toBeVisible();
    await agents.getByRole('radio', { name: /^Gemini CLI \(version/ }).check();
    await page.getByLabel('Your name').fill('Grace Hopper');
    await page.getByLabel('Email').fill('grace@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Workspace name').fill('Compilers');
    await page.getByRole('button', { name: 'Create account and workspace' }).click();
    await expect(page.getByRole('heading', { name: 'No sessions yet' })).toBeVisible();

    await page.goto(`${server.url}/settings/agent`);
    await expect(page.getByText('Set for this workspace.')).toBeVisible();
    // Gemini CLI itself, not Gemini CLI driven through the Agent Client Protocol (listed apart).
    await expect(page.getByRole('radio', { name: /^Gemini CLI \(version/ })).toBeChecked();
    await expect(
      page.getByRole('radio', { name: /^Gemini CLI \(Agent Client Protocol\)/ }),
    ).not.toBeChecked();
    // The missing CLI is folded under Not installed, with the command that installs it.
    await expect(page.getByRole('radio', { name: /^Claude Code/ })).toHaveCount(0);
    await page.getByText(/^Not installed \(\d+\)$/u).click();
    await expect(
      page
        .getByRole('list', { name: 'Agents not installed' })
        .getByRole('listitem')
        .filter({ hasText: /^Claude Code/ }),
    ).toContainText('npm install -g @anthropic-ai/claude-code');
  } finally {
    await server.stop();
    removePlace(place);
    rmSync(bin, { recursive: true, force: true });
  }
});

test('first-run setup offers an ACP agent found here, first when it is the only one, and gives it to the workspace', async ({
  page,
}) => {
  // Only OpenCode is installed for this server (a stand-in that says its version).
  const bin = mkdtempSync(join(tmpdir(), 'e2e-setup-acp-'));
  writeFileSync(join(bin, 'opencode'), '#!/bin/sh\necho 1.2.3\n', { mode: 0o755 });
  const place = await newPlace();
  const server = await servePlace(place, ['--log-level', 'warn'], {
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
  });
  try {
    await page.goto(server.launchUrl);
    const agents = page.getByRole('group', { name: 'Agent for this workspace' });
    await expect(agents.getByRole('radio', { name: /^OpenCode \(version 1\.2\.3\)/ })).toBeChecked();
    await expect(page.getByText(/No agent (CLI )?was found/u)).toHaveCount(0);
    await page.getByLabel('Your name').fill('Grace Hopper');
    await page.getByLabel('Email').fill('grace@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Workspace name').fill('Compilers');
    await page.getByRole('button', { name: 'Create account and workspace' }).click();
    await expect(page.getByRole('heading', { name: 'No sessions yet' })).toBeVisible();

    await page.goto(`${server.url}/settings/agent`);
    await expect(page.getByRole('radio', { name: /^OpenCode \(version 1\.2\.3, / })).toBeChecked();
  } finally {
    await server.stop();
    removePlace(place);
    rmSync(bin, { recursive: true, force: true });
  }
});

test('the stats say what they count, on the page', async ({ page, seeded }) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  const stats = page.getByRole('region', { name: 'Workspace stats' });
  await expect(stats).toContainText('Pull requests from sessions, merged in the last 7 days');
  await expect(stats).toContainText('People with a session active right now');
});

test('a key needs a label; an unknown member email is invited, and offered a local account', async ({
  page,
  seeded,
}) => {
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByText('Give the key a label, e.g. what script uses it.')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'No API keys' })).toBeVisible();

  await page.getByRole('link', { name: 'Members' }).click();
  await page.getByLabel('Email').fill('nobody@example.test');
  await page.getByRole('button', { name: 'Add member' }).click();
  await expect(
    page.getByText('No account has this email yet, so nobody@example.test is invited'),
  ).toBeVisible();
  await expect(page.getByRole('list', { name: 'Invited to Acme' })).toContainText('nobody@example.test');
  await page.getByRole('button', { name: 'Create a local account for this person' }).click();
  await expect(page.getByLabel('Create a new local account for this person')).toBeChecked();
  await page.getByLabel('Name').fill('No Body');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add member' }).click();
  await expect(page.getByRole('list', { name: 'Members of Acme' })).toContainText('nobody@example.test');
  // The new account took up the invitation.
  await expect(page.getByRole('list', { name: 'Invited to Acme' })).toHaveCount(0);
});

test('the API page copies its examples, including stop, follow-up and live events', async ({
  page,
  context,
  seeded,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: seeded.server.url });
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'API', exact: true }).click();
  for (const title of ['Stop a session', 'Send a follow-up prompt', 'Follow live events of the workspace']) {
    await expect(page.getByRole('heading', { name: title })).toBeVisible();
  }
  await page.getByRole('button', { name: 'Copy Follow live events of the workspace' }).click();
  await expect(
    page.getByRole('button', { name: 'Copied Follow live events of the workspace' }),
  ).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    `curl -N -H "x-api-key: $SESSIONDESK_KEY" "${seeded.server.url}/api/events"`,
  );
});

test('a command the administrator defined is chosen by name, takes any model, and claims none', async ({
  page,
  seeded,
}) => {
  await writeNamedCommands(seeded.server.dataDir, { 'my-agent': ['my-agent', '--json'] });
  await signIn(page, seeded.server.url, seeded.data.email, seeded.data.password);
  await page.getByRole('link', { name: 'Agent', exact: true }).click();
  await page.getByLabel('A local agent command the administrator defined').check();
  await expect(page.getByRole('combobox', { name: 'Command', exact: true })).toHaveValue('my-agent');
  await expect(page.getByText('my-agent --json')).toBeVisible();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();
  await page.reload();
  await expect(page.getByRole('combobox', { name: 'Command', exact: true })).toHaveValue('my-agent');

  // A local command takes any model name, and none unless one is typed.
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await expect(page.getByText('Runs with the command "my-agent", this workspace\'s agent.')).toBeVisible();
  const model = page.getByLabel('Model');
  await expect(model).toHaveJSProperty('tagName', 'INPUT');
  await expect(model).toHaveValue('');
  await expect(model).toHaveAttribute('placeholder', 'None');
  await expect(
    page.getByText('Given to the command as {model}, which stays empty without one.'),
  ).toBeVisible();
  await model.fill('my-local-model');
  await expect(model).toHaveValue('my-local-model');
  await model.fill('');

  // Started without a model, its session does not claim one.
  await page.getByLabel('Prompt', { exact: true }).fill('Tidy the changelog');
  await page.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByRole('heading', { name: 'Tidy the changelog', level: 1 })).toBeVisible();
  await expect(page.getByRole('definition').filter({ hasText: "The agent's own default" })).toBeVisible();
  await expect(page.getByText('claude-opus-4-6')).toHaveCount(0);
});
