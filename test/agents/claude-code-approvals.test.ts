import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import {
  approvalNotices,
  decide,
  decided,
  firstRequest,
  getApproval,
  sessionNow,
} from '../helpers/approvals.js';
import { bash, waitForResults } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { asUser, createSession, seedWorkspace, signIn, startTestServer, tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

/**
 * The real Claude Code CLI against the scripted Anthropic server, in a workspace that asks
 * before agents act: its own permission prompts come over its stream-json control protocol.
 */

const cleanup = useCleanups();
const claude = agentCliTool('claude');
const LONG = { timeout: 180_000 };

/** A model that runs one command writing `out.txt`, then says it is done. */
const SCRIPT = [
  {
    match: 'TWICE',
    turns: [
      bash('touch first.txt'),
      bash('touch second.txt'),
      { blocks: [{ type: 'text' as const, text: 'Both.' }] },
    ],
  },
  // A follow-up's prompt is the latest of a conversation that began with WRITE-IT.
  {
    match: 'INSTEAD',
    latest: true,
    turns: [{ blocks: [{ type: 'text' as const, text: 'Doing that instead.' }] }],
  },
  {
    match: 'WRITE-IT',
    turns: [bash('echo done > out.txt'), { blocks: [{ type: 'text', text: 'Finished.' }] }],
  },
];

async function askingServer(settings: Record<string, unknown> = {}, prompt = 'Write the file. WRITE-IT') {
  const cli = await realCli('claude-code', SCRIPT, tempDir('approvals-claude-home-'));
  cleanup(() => cli.close());
  const serverOptions = {
    agentEnv: { PATH: process.env.PATH, ...cli.env, SESSIONDESK_CLAUDE_BIN: cli.bin },
    agentEnvNames: cli.names,
  };
  const server = await startTestServer(serverOptions);
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const cookie = owner.user.cookie;
  const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    agent: 'claude-code',
    approvals: 'ask',
    ...settings,
  });
  expect(put.status, await put.clone().text()).toBe(200);
  const created = await createSession(server, cookie, {
    organizationId: owner.organizationId,
    initialMessage: prompt,
  });
  const output = join(sandboxPath(server.sandboxRoot, created.id), 'out.txt');
  return { server, owner, cookie, sessionId: created.id, output, cli, serverOptions };
}

describe('approvals of Claude Code', requireTools(claude), () => {
  it('its permission prompt waits in the inbox; allowed, the command runs', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(request).toMatchObject({
      agent: 'claude-code',
      title: 'echo done > out.txt',
      tool: { kind: 'execute', name: 'Bash', input: { command: 'echo done > out.txt' } },
      detail: '$ echo done > out.txt\n\nRun a command',
    });
    // The transcript's request carries it too, for the dashboard to show it apart from the words.
    const asked = (await sessionNow(server, cookie, sessionId)).messages.find((m) => 'approval' in m);
    expect(asked).toMatchObject({ approval: { id: request.id, detail: request.detail } });
    expect(request.options.map((o) => o.kind)).toContain('allow_once');
    expect((await sessionNow(server, cookie, sessionId)).agentState).toBe('needs_input');
    expect(existsSync(output)).toBe(false);
    await decide(server, cookie, request.id, { decision: 'allow_once' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    expect(existsSync(output)).toBe(true);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Finished.' });
  });

  it('rejected, the command does not run, and the agent is told why', LONG, async () => {
    const { server, owner, cookie, sessionId, output, cli } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    await decide(server, cookie, request.id, { decision: 'reject_once', message: 'Use the notes folder.' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
    // The model's next request carries the rejection, with the person's words.
    expect(JSON.stringify(cli.requests.at(-1)?.body)).toContain('Use the notes folder.');
    expect(approvalNotices(session).at(-1)).toContain('Message to the agent: Use the notes folder.');
  });

  it('the time-out rejects it', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer({ approvalTimeoutSeconds: 5 });
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(await decided(server, cookie, request.id)).toMatchObject({
      decision: 'reject_once',
      decidedBy: { kind: 'sessiondesk', reason: 'timeout' },
    });
    await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
  });

  it('Stop cancels it', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    const stop = await asUser(server, cookie, 'POST', `/api/sessions/${sessionId}/stop`);
    expect(stop.status, await stop.clone().text()).toBe(200);
    await waitForResults(server, cookie, sessionId, 1, 30_000);
    expect(await getApproval(server, cookie, request.id)).toMatchObject({
      decision: 'cancelled',
      decidedBy: { kind: 'sessiondesk', reason: 'stopped' },
    });
    expect(existsSync(output)).toBe(false);
  });

  it('a follow-up that interrupts the run cancels it', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    const posted = await asUser(server, cookie, 'POST', `/api/sessions/${sessionId}/messages`, {
      content: 'Do something else. INSTEAD',
    });
    expect(posted.status, await posted.clone().text()).toBe(201);
    expect(await getApproval(server, cookie, request.id)).toMatchObject({
      decision: 'cancelled',
      decidedBy: { kind: 'sessiondesk', reason: 'follow-up' },
    });
    const session = await waitForResults(server, cookie, sessionId, 2, 90_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Doing that instead.' });
    expect(existsSync(output)).toBe(false);
  });

  it('a server that stops answers it as cancelled, and shows it so when it starts again', LONG, async () => {
    const { server, owner, cookie, sessionId, output, serverOptions } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    await server.stop();
    const restarted = await startTestServer({ ...serverOptions, dataDir: server.dataDir });
    cleanup(() => restarted.dispose());
    const again = await signIn(restarted, owner.user.email);
    expect(await getApproval(restarted, again, request.id)).toMatchObject({
      decision: 'cancelled',
      decidedBy: { kind: 'sessiondesk', reason: 'server-stopped' },
    });
    expect(approvalNotices(await sessionNow(restarted, again, sessionId))).toContain(
      'Session Desk was stopped before anyone decided: the request is cancelled.',
    );
    expect(existsSync(output)).toBe(false);
  });

  it('allowed for this session, the same kind of command is not asked about again', LONG, async () => {
    const { server, owner, cookie, sessionId } = await askingServer({}, 'Touch two files. TWICE');
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(request.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    await decide(server, cookie, request.id, { decision: 'allow_always' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Both.' });
    const folder = sandboxPath(server.sandboxRoot, sessionId);
    expect([existsSync(join(folder, 'first.txt')), existsSync(join(folder, 'second.txt'))]).toEqual([
      true,
      true,
    ]);
    expect(approvalNotices(session).filter((t) => t.startsWith('The agent asks'))).toHaveLength(1);
  });

  it("the time a request waits does not count against the run's time limit", LONG, async () => {
    const { server, owner, cookie, sessionId } = await askingServer({
      timeoutMs: 20_000,
      approvalTimeoutSeconds: 25,
    });
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(await decided(server, cookie, request.id)).toMatchObject({ decidedBy: { reason: 'timeout' } });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    // 25 seconds of waiting, yet the run of a 20-second limit ends as its model says.
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Finished.' });
  });
});
