// The offline demo shows what the product is for: on `serve --demo`, with approvals set to ask,
// the demo agent's edit waits in the Inbox, is allowed there, and the session's Changes show the
// real diff it made in its clone of the sample project; the command it was refused never ran.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { DEMO } from '../../src-main/demo/people.js';
import { startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { expect, screenshotsInBothThemes, test } from './fixtures.js';

test('the demo: asked first, the edit waits in the Inbox; allowed, Changes shows its diff; a rejected command is not run', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const dataDir = tempDir('sessiondesk-e2e-demo-');
  const server = await startServe(dataDir, ['--demo', '--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: '150',
  });
  try {
    await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
    await page.goto(server.launchUrl);
    await page.getByRole('button', { name: 'Sign in to the demo workspace' }).click();
    await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();

    // Settings › Agent: what the demo cannot run is not offered, and says why before any Save;
    // asking first is.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Agent' }).click();
    await expect(page.getByLabel(/Demo agent/)).toBeChecked();
    const command = page.getByLabel('A local agent command the administrator defined');
    await expect(command).toBeDisabled();
    await expect(command).toHaveAccessibleDescription(
      "The demo's accounts run the demo agent only: create your own account for that.",
    );
    // Every other agent: installed ones locked, saying why; the rest only listed, to install.
    const agents = page.locator('input[type="radio"][name="agent"]:not([value="demo"])');
    await expect(agents.first()).toBeAttached();
    for (const radio of await agents.all()) await expect(radio).toBeDisabled();
    await expect(page.getByText(/Not installed \(\d+\)/u)).toBeVisible();
    await expect(page.getByText('the demo agent ask (before each edit and each command)')).toBeVisible();
    await screenshotsInBothThemes(page, 'demo-agent-settings');
    await page.getByLabel(/Ask first/).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();

    // A session: the demo agent clones its sample project, reads, then asks before its edit.
    await page.getByRole('link', { name: 'New session' }).click();
    await page.getByLabel('Prompt', { exact: true }).fill('Add retries to the upload client');
    await page.getByRole('button', { name: 'Start session' }).click();
    await expect(
      page.getByRole('heading', { name: 'Add retries to the upload client', level: 1 }),
    ).toBeVisible();
    const sessionId = new URL(page.url()).pathname.split('/').pop() ?? '';
    const folder = sandboxPath(defaultSandboxRoot(dataDir), sessionId);
    await expect(nav.getByRole('link', { name: 'Inbox, 1 waiting' })).toBeVisible({ timeout: 30_000 });

    await nav.getByRole('link', { name: /^Inbox/ }).click();
    const requests = page.getByRole('list', { name: 'Requests' }).getByRole('article');
    const edit = requests.filter({ hasText: 'Edit src/config.js' });
    await expect(edit).toContainText('Demo agent');
    await expect(edit.getByLabel('What Edit would do')).toContainText('-  retries: 0,');
    await expect(edit.getByRole('button', { name: 'Allow all edits' })).toBeVisible();
    expect(readFileSync(join(folder, 'src/config.js'), 'utf8')).toContain('retries: 0,');
    await screenshotsInBothThemes(page, 'demo-inbox');
    await edit.getByRole('button', { name: 'Allow all edits' }).click();

    // Its note is an edit too, allowed already; the commit is a command, asked, and rejected.
    const commit = requests.filter({ hasText: 'git add --all && git commit' });
    await expect(commit.getByLabel('What Bash would do')).toHaveText(
      '$ git add --all && git commit --no-verify -m "Add retries to the upload client"',
      { timeout: 30_000 },
    );
    await commit.getByRole('button', { name: 'Reject' }).click();
    await page.getByLabel('Message to the agent (optional)').fill('I will commit it myself.');
    await page.getByLabel('Message to the agent (optional)').press('Enter');
    await expect(page.getByText('Nothing waiting for you')).toBeVisible();

    // The session: finished in part, the refused command said so, and nothing committed.
    await page.goto(`${server.url}/sessions/${sessionId}`);
    const transcript = page.getByRole('region', { name: 'Conversation' });
    await expect(transcript).toContainText('Finished, in part: Add retries to the upload client', {
      timeout: 30_000,
    });
    await expect(transcript).toContainText('Message to the agent: I will commit it myself.');
    await expect(transcript).toContainText('left uncommitted');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', folder, ...args], { encoding: 'utf8' }).trim();
    expect(git('log', '--format=%s', 'origin/main..HEAD')).toBe('');

    // Changes: the real diff it left in its clone, the edit and the new note.
    const changes = page.getByRole('region', { name: 'Changes' });
    await expect(changes).toContainText('2 files');
    await changes.getByRole('button', { name: 'Show files' }).click();
    const files = changes.getByRole('list', { name: 'Changed files' });
    await expect(files.getByRole('listitem')).toHaveText([
      /notes\/add-retries-to-the-upload-client\.md.*\+\d+ −0/u,
      /src\/config\.js.*\+1 −1/u,
    ]);
    await files.getByText('src/config.js').click();
    const retries = /retries: (\d+),/u.exec(readFileSync(join(folder, 'src/config.js'), 'utf8'))?.[1];
    await expect(changes.getByLabel('Diff of src/config.js')).toContainText(`+  retries: ${retries},`);
    await expect(changes.getByLabel('Diff of src/config.js')).toContainText('-  retries: 0,');

    // Details: no model ran and nothing was paid; its pull request step says it is simulated.
    const details = page.getByRole('region', { name: 'Details' });
    await expect(details).toContainText('none: simulated');
    await expect(details).toContainText('simulated: no tokens, nothing paid');
    await expect(details).not.toContainText('$');
    await expect(details).not.toContainText('claude-opus');
    await expect(page.getByRole('region', { name: 'Pull request' })).toContainText(
      'Simulated: the demo has no code host, so no pull request is opened.',
    );
    await screenshotsInBothThemes(page, 'demo-changes');
    // At 900 px the page is no wider than the window, the long command in the transcript included.
    await page.setViewportSize({ width: 900, height: 900 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBe(900);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
  }
});

test("the demo's sample sessions: made-up pull requests marked simulated and unlinked, no model or cost claimed, Changes saying what they are", async ({
  page,
}) => {
  const dataDir = tempDir('sessiondesk-e2e-demo-');
  const server = await startServe(dataDir, ['--demo', '--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: '3600000',
  });
  try {
    await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
    await page.goto(server.launchUrl);
    await page.getByRole('button', { name: 'Sign in to the demo workspace' }).click();
    await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
    // One whose pull request was merged, as the workspace's history tells it.
    const listed = await page.request.get(`${server.url}/api/sessions?organizationId=${DEMO.organizationId}`);
    const { sessions } = (await listed.json()) as {
      sessions: { id: string; metadata: { prStatus?: string } }[];
    };
    const merged = sessions.find((s) => s.metadata.prStatus === 'merged');
    await page.goto(`${server.url}/sessions/${merged!.id}`);
    const panel = page.getByRole('region', { name: 'Pull request' });
    await expect(panel).toContainText(/#\d+merged · simulated/u);
    await expect(panel).toContainText('Simulated: the demo has no code host, so no pull request is opened.');
    await expect(page.getByRole('main').getByRole('link', { name: /#\d+/u })).toHaveCount(0);
    const details = page.getByRole('region', { name: 'Details' });
    await expect(details).toContainText('none: simulated');
    await expect(details).toContainText('simulated: no tokens, nothing paid');
    await expect(details).not.toContainText('$');
    await expect(page.getByRole('region', { name: 'Changes' })).toContainText(
      'A sample session of the demo: its transcript was written with the demo workspace',
    );
    await screenshotsInBothThemes(page, 'demo-sample-session');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
  }
});
