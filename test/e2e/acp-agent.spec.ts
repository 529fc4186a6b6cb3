// An agent driven through the Agent Client Protocol, seen in a real browser: the real Codex
// through its ACP adapter (codex-acp), against the scripted Responses server, chosen in
// Settings › Agent with asking first. What it asks waits in the Inbox; allowed there, its
// command runs; the session's transcript shows its work, and a follow-up from the session page
// is answered in the same ACP session.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { ACP_AGENTS_UNDER_TEST, acpAgentTool } from '../helpers/acp-runs.js';
import { startServe } from '../helpers/cli.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { seedDataDir } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';
import { expect, signIn, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

const codexAcp = acpAgentTool(ACP_AGENTS_UNDER_TEST.codex!);
const codex = agentCliTool('codex');
const COMMAND = 'echo done > out.txt';

const SCRIPT = [
  {
    match: 'WRITE-IT',
    turns: [
      { output: { call: 'exec_command', arguments: { cmd: COMMAND } } },
      { output: { text: 'Wrote out.txt.' } },
      { output: { text: 'It says done.' } },
    ],
  },
];

test('Codex through the Agent Client Protocol: chosen in Settings, asks in the Inbox, runs, and answers a follow-up', async ({
  page,
}) => {
  requireTools(codexAcp, codex);
  test.setTimeout(240_000);
  const root = tempDir('sessiondesk-e2e-acp-');
  const dataDir = join(root, 'data');
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const cli = await realCli('codex', SCRIPT, home);
  const stops: (() => Promise<unknown>)[] = [() => cli.close()];
  try {
    const data = await seedDataDir(dataDir);
    const server = await startServe(dataDir, ['--log-level', 'warn'], {
      ...cli.env,
      SESSIONDESK_CODEX_BIN: cli.bin,
      SESSIONDESK_CODEX_ACP_BIN: codexAcp.path!,
      SESSIONDESK_AGENT_ENV: cli.names.join(','),
    });
    stops.push(() => server.stop());
    const base = server.url;
    await signIn(page, base, data.email, data.password);

    // Settings › Agent: Codex through its adapter, listed apart from Codex itself, asking first.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Agent' }).click();
    await page.getByRole('radio', { name: /^Codex \(Agent Client Protocol\)/ }).check();
    await page.getByLabel(/Ask first/).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Saved. New sessions and follow-ups use it.')).toBeVisible();
    const settings = await page.request.get(`${base}/api/workspaces/${data.organizationId}/agent`);
    expect((await settings.json()).settings).toMatchObject({
      agent: 'acp',
      acpAgent: 'codex',
      approvals: 'ask',
    });

    const created = await page.request.post(`${base}/api/sessions`, {
      headers: { origin: base },
      data: { organizationId: data.organizationId, initialMessage: 'Write the file. WRITE-IT' },
    });
    expect(created.status(), await created.text()).toBe(201);
    const sessionId = ((await created.json()) as { session: { id: string } }).session.id;
    const output = join(sandboxPath(defaultSandboxRoot(dataDir), sessionId), 'out.txt');

    // Its request arrives in the Inbox with Codex's own choices; allowed, the command runs.
    await expect(nav.getByRole('link', { name: 'Inbox, 1 waiting' })).toBeVisible({ timeout: 90_000 });
    await nav.getByRole('link', { name: /^Inbox/ }).click();
    const request = page.getByRole('list', { name: 'Requests' }).getByRole('article');
    await expect(request).toHaveCount(1);
    await expect(request).toContainText(COMMAND);
    await expect(request).toContainText('Codex');
    expect(existsSync(output)).toBe(false);
    await request.getByRole('button', { name: 'Yes, proceed' }).click();
    await expect(page.getByText('Nothing waiting for you')).toBeVisible();
    await expect.poll(() => existsSync(output), { timeout: 60_000 }).toBe(true);
    expect(readFileSync(output, 'utf8')).toBe('done\n');

    // The session page: the request decided in place, the command's result, the answer.
    await page.goto(`${base}/sessions/${sessionId}`);
    // The session's details name the agent as Settings does, not as "ACP agent".
    await expect(
      page.getByRole('definition').filter({ hasText: /^Codex \(Agent Client Protocol\)$/u }),
    ).toBeVisible();
    const transcript = page.getByRole('region', { name: 'Conversation' });
    await expect(transcript.getByRole('article', { name: `Request: ${COMMAND}` })).toContainText(
      'Allowed once',
    );
    await expect(transcript.getByRole('status').filter({ hasText: 'Wrote out.txt.' })).toContainText(
      'Finished',
      { timeout: 60_000 },
    );

    // A follow-up from the session page, answered in the same ACP session.
    await page.getByLabel('Follow-up prompt').fill('What does the file say?');
    await page.keyboard.press('Control+Enter');
    await expect(transcript.getByRole('status').filter({ hasText: 'It says done.' })).toContainText(
      'Finished',
      { timeout: 90_000 },
    );
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
});
