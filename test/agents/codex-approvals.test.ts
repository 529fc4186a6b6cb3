import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHomePath } from '../../src-main/agents/kinds/cli/cli-homes.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import {
  approvalNotices,
  decide,
  decided,
  firstRequest,
  getApproval,
  pendingApprovals,
  sessionNow,
} from '../helpers/approvals.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { ACP_AGENTS_UNDER_TEST, acpAgentTool } from '../helpers/acp-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';
import { runProcesses } from '../helpers/run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';

/**
 * The real Codex, through its ACP adapter (codex-acp, launched with `approval_policy="untrusted"`),
 * against the scripted Responses server, in a workspace that asks before agents act: what Codex
 * asks comes as `session/request_permission` and waits in the inbox.
 */

const cleanup = useCleanups();
const codexAcp = acpAgentTool(ACP_AGENTS_UNDER_TEST.codex!);
const codex = agentCliTool('codex');
const LONG = { timeout: 180_000 };
const COMMAND = 'echo done > out.txt';
const APPEND = 'echo again >> log.txt';

/**
 * A model that runs one command writing `out.txt`, or adds `NOTES.md` by a patch, then says it
 * is done; told no, it says it left it.
 */
const SCRIPT = [
  {
    match: 'WRITE-IT',
    turns: [
      { output: { call: 'exec_command', arguments: { cmd: COMMAND } } },
      { output: { text: 'Finished.' } },
    ],
  },
  {
    match: 'LEAVE-IT',
    turns: [
      { output: { call: 'exec_command', arguments: { cmd: COMMAND } } },
      { output: { text: 'Understood, I left it.' } },
    ],
  },
  {
    match: 'TWICE',
    turns: [
      { output: { call: 'exec_command', arguments: { cmd: APPEND } } },
      { output: { call: 'exec_command', arguments: { cmd: APPEND } } },
      { output: { text: 'Twice.' } },
    ],
  },
  {
    match: 'PATCH-IT',
    turns: [
      {
        output: {
          custom: 'apply_patch',
          input: '*** Begin Patch\n*** Add File: NOTES.md\n+First line\n*** End Patch\n',
        },
      },
      { output: { text: 'Patched.' } },
    ],
  },
  {
    match: 'PATCH-NOT',
    turns: [
      {
        output: {
          custom: 'apply_patch',
          input: '*** Begin Patch\n*** Add File: NOTES.md\n+First line\n*** End Patch\n',
        },
      },
      { output: { text: 'Left the notes alone.' } },
    ],
  },
];

async function codexServer(settings: Record<string, unknown>, prompt: string) {
  const home = tempDir('approvals-codex-home-');
  const cli = await realCli('codex', SCRIPT, home);
  cleanup(() => cli.close());
  const server = await startTestServer({
    agentEnv: {
      PATH: process.env.PATH,
      ...cli.env,
      SESSIONDESK_CODEX_BIN: cli.bin,
      ...(codexAcp.path ? { SESSIONDESK_CODEX_ACP_BIN: codexAcp.path } : {}),
    },
    agentEnvNames: cli.names,
  });
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const cookie = owner.user.cookie;
  // Codex through its ACP adapter, unless the settings name another agent.
  const agent = settings.agent === undefined ? { agent: 'acp', acpAgent: 'codex' } : {};
  const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    ...agent,
    ...settings,
  });
  expect(put.status, await put.clone().text()).toBe(200);
  const created = await createSession(server, cookie, {
    organizationId: owner.organizationId,
    initialMessage: prompt,
  });
  const folder = sandboxPath(server.sandboxRoot, created.id);
  return { server, owner, cookie, sessionId: created.id, folder, output: join(folder, 'out.txt'), cli, home };
}

const LEAVE = 'Write the file, or not. LEAVE-IT';

const askingServer = (settings: Record<string, unknown> = {}, prompt = 'Write the file. WRITE-IT') =>
  codexServer({ approvals: 'ask', ...settings }, prompt);

/** The texts of what the model was sent after its first request: tool outputs and prompts. */
const laterRequests = (cli: { requests: { body: unknown }[] }) =>
  cli.requests.slice(1).map((r) => JSON.stringify(r.body));

describe('approvals of Codex through its ACP adapter', requireTools(codexAcp), () => {
  it(
    'its command waits in the inbox with needs_input, with its own choices; allowed, it runs',
    LONG,
    async () => {
      const { server, owner, cookie, sessionId, output } = await askingServer();
      const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
      expect(request).toMatchObject({
        agent: 'acp:codex',
        title: COMMAND,
        tool: { kind: 'execute', input: { command: ['/bin/bash', '-lc', COMMAND] } },
      });
      // Codex's own choices, as it names them: once, a rule for commands like it, or stop and say why.
      expect(request.options).toEqual([
        { id: 'approved', kind: 'allow_once', label: 'Yes, proceed' },
        {
          id: 'approved-execpolicy-amendment',
          kind: 'allow_always',
          label: expect.stringContaining("Yes, and don't ask again for commands that start with"),
        },
        { id: 'abort', kind: 'reject_once', label: 'No, and tell Codex what to do differently' },
      ]);
      const waiting = await sessionNow(server, cookie, sessionId);
      expect(waiting.agentState).toBe('needs_input');
      expect(approvalNotices(waiting)[0]).toContain(`$ ${COMMAND}`);
      expect(existsSync(output)).toBe(false);

      await decide(server, cookie, request.id, { decision: 'allow_once' });
      const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(session.messages.at(-1)).toMatchObject({
        type: 'result',
        subtype: 'success',
        result: 'Finished.',
      });
      expect(readFileSync(output, 'utf8')).toBe('done\n');
      expect(session.agentState).toBeUndefined();
      expect(approvalNotices(session).at(-1)).toContain(
        'Allow once (the agent\'s "Yes, proceed"): decided by User owner.',
      );
    },
  );

  it('rejected, the command does not run, and Codex is told why and goes on', LONG, async () => {
    const { server, owner, cookie, sessionId, output, cli } = await askingServer({}, LEAVE);
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    await decide(server, cookie, request.id, { decision: 'reject_once', message: 'Use the notes folder.' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
    // Codex ends its turn at "No, and tell Codex what to do differently": what to do is said to it.
    const told = laterRequests(cli).join('\n');
    expect(told).toContain(`Your request was rejected, so it did not happen: ${COMMAND}`);
    expect(told).toContain('Use the notes folder.');
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Understood, I left it.' });
    expect(approvalNotices(session).at(-1)).toContain('Message to the agent: Use the notes folder.');
    expect(runProcesses(sessionId)).toEqual([]);
  });

  it('rejects what no one decides within the workspace time-out, and Codex is told', LONG, async () => {
    const { server, owner, cookie, sessionId, output, cli } = await askingServer(
      { approvalTimeoutSeconds: 5 },
      LEAVE,
    );
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(await decided(server, cookie, request.id)).toMatchObject({
      decision: 'reject_once',
      optionId: 'abort',
      decidedBy: { kind: 'sessiondesk', reason: 'timeout' },
    });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
    expect(laterRequests(cli).join('\n')).toContain('No one decided in time');
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Understood, I left it.' });
    expect(approvalNotices(session)).toContain('No one decided within 5 seconds: rejected.');
  });

  it('Stop cancels it, and nothing of the run is left', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer();
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(runProcesses(sessionId).length).toBeGreaterThan(0);
    const stop = await asUser(server, cookie, 'POST', `/api/sessions/${sessionId}/stop`);
    expect(stop.status, await stop.clone().text()).toBe(200);
    const session = await waitForResults(server, cookie, sessionId, 1, 30_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', stopped: true });
    expect(await getApproval(server, cookie, request.id)).toMatchObject({
      decision: 'cancelled',
      decidedBy: { kind: 'sessiondesk', reason: 'stopped' },
    });
    await expect.poll(() => runProcesses(sessionId), { timeout: 10_000, interval: 100 }).toEqual([]);
    expect(existsSync(output)).toBe(false);
  });

  it(
    "allowed with Codex's rule for commands like it, the same command is not asked about again",
    LONG,
    async () => {
      const { server, owner, cookie, sessionId, folder, home } = await askingServer(
        {},
        'Append twice. TWICE',
      );
      const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
      const answer = (await decide(server, cookie, request.id, { decision: 'allow_always' })) as {
        approval: { optionId?: string };
      };
      expect(answer.approval.optionId).toBe('approved-execpolicy-amendment');
      const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
      expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Twice.' });
      expect(readFileSync(join(folder, 'log.txt'), 'utf8')).toBe('again\nagain\n');
      expect(approvalNotices(session).filter((t) => t.startsWith('The agent asks'))).toHaveLength(1);
      // Codex keeps the rule in its home: the session's own, never the person's.
      const rules = join(cliHomePath(server.sandboxRoot, sessionId), 'codex', 'rules');
      expect(readdirSync(rules).length).toBeGreaterThan(0);
      expect(existsSync(join(home, 'rules'))).toBe(false);
    },
  );

  it('a file edit asks too, showing its diff; allowed, the file is written', LONG, async () => {
    const { server, owner, cookie, sessionId, folder } = await askingServer({}, 'Add notes. PATCH-IT');
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(request.tool.kind).toBe('edit');
    expect(request.options).toEqual([
      { id: 'approved', kind: 'allow_once', label: 'Yes' },
      { id: 'abort', kind: 'reject_once', label: 'No, provide feedback' },
    ]);
    expect(approvalNotices(await sessionNow(server, cookie, sessionId))[0]).toContain('+First line');
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(false);
    await decide(server, cookie, request.id, { decision: 'allow_once' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Patched.' });
    expect(readFileSync(join(folder, 'NOTES.md'), 'utf8')).toBe('First line\n');
  });

  it('a file edit rejected is not written, and Codex hears the feedback', LONG, async () => {
    const { server, owner, cookie, sessionId, folder, cli } = await askingServer({}, 'Add notes. PATCH-NOT');
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    await decide(server, cookie, request.id, { decision: 'reject_once', message: 'No notes file.' });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Left the notes alone.' });
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(false);
    expect(laterRequests(cli).join('\n')).toContain('No notes file.');
  });

  it('with approvals on auto, nothing asks and the run completes unattended', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await codexServer(
      { approvals: 'auto' },
      'Write the file. WRITE-IT',
    );
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.messages.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      result: 'Finished.',
    });
    expect(readFileSync(output, 'utf8')).toBe('done\n');
    expect(approvalNotices(session)).toEqual([]);
    expect(await pendingApprovals(server, cookie, owner.organizationId, sessionId)).toEqual([]);
  });
});

describe('Codex run natively, in a workspace that asks', requireTools(codex), () => {
  it('runs unattended, and its transcript says how Codex is asked instead', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await codexServer(
      { agent: 'codex', approvals: 'ask' },
      'Write the file. WRITE-IT',
    );
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    expect(readFileSync(output, 'utf8')).toBe('done\n');
    const notices = session.messages.flatMap((m) =>
      m.type === 'assistant' && m.notice === 'info'
        ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
        : [],
    );
    expect(notices).toContain(
      'This workspace asks before agents act, but this agent cannot put its requests to Session Desk: it runs unattended in its sandbox, as with approvals set to auto. Claude Code, the agents that speak the Agent Client Protocol and the demo agent can be asked. Codex is asked through its ACP adapter (codex-acp): choose "Codex (Agent Client Protocol)" in Settings › Agent.',
    );
    // The name it gives is the one Settings › Agent lists.
    const listed = (await (await asUser(server, cookie, 'GET', '/api/agents')).json()) as {
      agents: { kind: string; acpAgent?: string; name: string }[];
    };
    expect(listed.agents.find((a) => a.acpAgent === 'codex')?.name).toBe('Codex (Agent Client Protocol)');
    expect(await pendingApprovals(server, cookie, owner.organizationId, sessionId)).toEqual([]);
  });
});
