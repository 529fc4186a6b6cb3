import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
import { useCleanups } from '../helpers/cleanups.js';
import { openEventStream } from '../helpers/events.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools, sqljsOnly } from '../helpers/require-tools.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  signIn,
  startTestServer,
  tempDir,
  withKey,
  type TestServerOptions,
} from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

/**
 * Gemini CLI in ACP mode, real, against its scripted model server, in a workspace that asks
 * before agents act: its shell command waits in the inbox until someone decides.
 */

const cleanup = useCleanups();
const gemini = agentCliTool('gemini');
const LONG = { timeout: 180_000 };

/** A model that runs one shell command writing `file`, then says whether it did. */
function writesFile(file: string) {
  return [
    {
      match: 'WRITE-IT',
      turns: [
        {
          parts: [
            { text: 'I will write the file.' },
            { call: 'run_shell_command', args: { command: `echo done > ${file}`, description: 'Write it' } },
          ],
        },
        { parts: [{ text: 'Finished.' }] },
        { parts: [{ text: 'Finished.' }] },
      ],
    },
  ];
}

async function askingServer(settings: Record<string, unknown>, options: TestServerOptions = {}) {
  const cli = await realCli('gemini', writesFile('out.txt'), tempDir('approvals-gemini-home-'));
  cleanup(() => cli.close());
  const serverOptions: TestServerOptions = {
    agentEnv: { PATH: process.env.PATH, ...cli.env, SESSIONDESK_GEMINI_BIN: cli.bin },
    agentEnvNames: cli.names,
    ...options,
  };
  const server = await startTestServer(serverOptions);
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const put = await asUser(
    server,
    owner.user.cookie,
    'PUT',
    `/api/workspaces/${owner.organizationId}/agent`,
    {
      agent: 'acp',
      acpAgent: 'gemini',
      approvals: 'ask',
      ...settings,
    },
  );
  expect(put.status, await put.clone().text()).toBe(200);
  expect(await put.json()).toMatchObject({ settings: { approvals: 'ask', ...settings } });
  const created = await createSession(server, owner.user.cookie, {
    organizationId: owner.organizationId,
    initialMessage: 'Write the file. WRITE-IT',
  });
  const output = join(sandboxPath(server.sandboxRoot, created.id), 'out.txt');
  return { server, owner, cookie: owner.user.cookie, sessionId: created.id, output, serverOptions };
}

describe('approvals of an ACP agent (Gemini CLI)', requireTools(gemini), () => {
  it(
    'waits in the inbox with needs_input; a key lists it, an allowed key decides it, and the command runs',
    LONG,
    async () => {
      const { server, owner, cookie, sessionId, output } = await askingServer({});
      const stream = await openEventStream(
        `${server.url}/api/events?organizationId=${owner.organizationId}`,
        {
          'x-api-key': owner.apiKey,
        },
      );
      cleanup(() => stream.close());
      const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
      expect(request).toMatchObject({
        sessionId,
        agent: 'acp:gemini',
        title: 'echo done > out.txt',
        tool: { kind: 'execute', name: 'run_shell_command', input: { command: 'echo done > out.txt' } },
      });
      expect(request.options.map((o) => o.kind).sort()).toEqual([
        'allow_always',
        'allow_once',
        'reject_once',
      ]);
      expect(Date.parse(request.expiresAt) - Date.parse(request.createdAt)).toBe(30 * 60_000);
      expect(existsSync(output)).toBe(false);
      const waiting = await sessionNow(server, cookie, sessionId);
      expect(waiting.agentState).toBe('needs_input');
      // The request stands in the transcript where it was made, the command in full, with its choices.
      const [asked] = approvalNotices(waiting);
      expect(asked).toContain('$ echo done > out.txt');
      expect(asked).toContain('Choices: Allow for this session · Allow once (the agent\'s "Allow") · Reject');
      await expect
        .poll(() => stream.events.map((e) => (e.data as { type: string }).type), { timeout: 10_000 })
        .toContain('approval.created');

      // Any key of the workspace lists; only one an owner allowed decides.
      const listed = await withKey(server, owner.apiKey, 'GET', `/api/approvals?sessionId=${sessionId}`);
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { approvals: { id: string }[] }).approvals.map((a) => a.id)).toEqual([
        request.id,
      ]);
      const plainKey = await withKey(server, owner.apiKey, 'POST', `/api/approvals/${request.id}`, {
        decision: 'allow_once',
      });
      expect(plainKey.status).toBe(403);
      expect(await plainKey.text()).toContain('canApprove');
      // Someone of another workspace neither sees nor decides it.
      const stranger = await seedWorkspace(server, 'stranger');
      await decide(server, stranger.user.cookie, request.id, { decision: 'allow_once' }, 403);
      const strangersList = await asUser(
        server,
        stranger.user.cookie,
        'GET',
        `/api/approvals?organizationId=${owner.organizationId}`,
      );
      expect(strangersList.status).toBe(403);
      // Bodies that say nothing clear are refused, saying why.
      const neither = await decide(server, cookie, request.id, {}, 400);
      expect(JSON.stringify(neither)).toContain('send either optionId or decision');
      await decide(server, cookie, request.id, { optionId: 'proceed_once', decision: 'allow_once' }, 400);
      const unknownOption = await decide(server, cookie, request.id, { optionId: 'no-such-option' }, 400);
      expect(JSON.stringify(unknownOption)).toContain('is not one of this request');
      await decide(server, cookie, request.id, { decision: 'maybe' }, 400);
      const messageWithAllow = await decide(
        server,
        cookie,
        request.id,
        { decision: 'allow_once', message: 'go on' },
        400,
      );
      expect(JSON.stringify(messageWithAllow)).toContain('A message goes with a rejection only');
      await decide(server, cookie, 'apr_AAAAAAAAAAAAAAAAAAAAAA', { decision: 'allow_once' }, 404);
      await decide(server, cookie, 'not-an-id', { decision: 'allow_once' }, 404);
      // Only an owner creates a key that decides.
      const member = await seedWorkspace(server, 'member');
      await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
      const memberKey = await asUser(
        server,
        member.user.cookie,
        'POST',
        `/api/workspaces/${owner.organizationId}/keys`,
        {
          label: 'bot',
          canApprove: true,
        },
      );
      expect(memberKey.status).toBe(403);
      const made = await asUser(server, cookie, 'POST', `/api/workspaces/${owner.organizationId}/keys`, {
        label: 'inbox bot',
        canApprove: true,
      });
      expect(made.status, await made.clone().text()).toBe(201);
      const { key } = (await made.json()) as { key: { key: string; canApprove?: boolean } };
      expect(key.canApprove).toBe(true);

      const allowed = await withKey(server, key.key, 'POST', `/api/approvals/${request.id}`, {
        decision: 'allow_once',
      });
      expect(allowed.status, await allowed.clone().text()).toBe(200);
      const answer = (await allowed.json()) as { approval: Record<string, unknown> };
      expect(answer.approval).toMatchObject({
        id: request.id,
        decision: 'allow_once',
        optionId: 'proceed_once',
        decidedBy: { kind: 'apiKey', label: 'inbox bot' },
      });
      expect(typeof answer.approval.decidedAt).toBe('string');
      // Decided once: a second decision is refused.
      const again = await decide(server, cookie, request.id, { decision: 'reject_once' }, 409);
      expect(JSON.stringify(again)).toContain('decided already');

      const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(existsSync(output)).toBe(true);
      expect(session.agentState).toBeUndefined();
      expect(approvalNotices(session).at(-1)).toBe(
        'Allow once (the agent\'s "Allow"): decided with the API key "inbox bot".',
      );
      expect(await pendingApprovals(server, cookie, owner.organizationId, sessionId)).toEqual([]);
      await expect
        .poll(() => stream.events.map((e) => (e.data as { type: string }).type), { timeout: 10_000 })
        .toContain('approval.decided');
    },
  );

  it('a rejection keeps the command from running and tells who rejected it and why', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer({});
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    const answer = (await decide(server, cookie, request.id, {
      decision: 'reject_once',
      message: 'Not in this folder.',
    })) as { approval: Record<string, unknown> };
    expect(answer.approval).toMatchObject({
      decision: 'reject_once',
      optionId: 'cancel',
      message: 'Not in this folder.',
      decidedBy: { kind: 'user', userId: owner.user.userId },
    });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
    const notices = approvalNotices(session);
    expect(notices.at(-1)).toContain('Reject: decided by User owner.');
    expect(notices.at(-1)).toContain('Message to the agent: Not in this folder.');
  });

  it('rejects what no one decides within the workspace time-out, saying so', LONG, async () => {
    const { server, owner, cookie, sessionId, output } = await askingServer({ approvalTimeoutSeconds: 5 });
    const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
    expect(Date.parse(request.expiresAt) - Date.parse(request.createdAt)).toBe(5000);
    const after = await decided(server, cookie, request.id);
    expect(after).toMatchObject({
      decision: 'reject_once',
      decidedBy: { kind: 'sessiondesk', reason: 'timeout' },
    });
    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(output)).toBe(false);
    expect(approvalNotices(session)).toContain('No one decided within 5 seconds: rejected.');
  });

  it(
    'Stop answers a pending request as cancelled; after a crash the restarted server shows it expired',
    {
      ...LONG,
      ...sqljsOnly(
        'copies the data directory as a crash leaves it; a team server keeps its approvals in PostgreSQL',
      ),
    },
    async () => {
      const { server, owner, cookie, sessionId, output, serverOptions } = await askingServer({});
      const request = await firstRequest(server, cookie, owner.organizationId, sessionId);
      // What a crash leaves on disk at this moment: the request pending, its run gone. A read
      // can show the request before its write is on disk; the copy waits for that write.
      await server.store.whenTranscriptSettled(sessionId, () => undefined);
      const crashed = tempDir('approvals-crash-');
      cpSync(server.dataDir, crashed, { recursive: true });

      const stop = await asUser(server, cookie, 'POST', `/api/sessions/${sessionId}/stop`);
      expect(stop.status, await stop.clone().text()).toBe(200);
      const session = await waitForResults(server, cookie, sessionId, 1, 30_000);
      expect(await getApproval(server, cookie, request.id)).toMatchObject({
        decision: 'cancelled',
        decidedBy: { kind: 'sessiondesk', reason: 'stopped' },
      });
      expect(approvalNotices(session)).toContain(
        'The run was stopped before anyone decided: the request is cancelled.',
      );
      expect(existsSync(output)).toBe(false);
      await server.dispose();

      const restarted = await startTestServer({ ...serverOptions, dataDir: crashed });
      cleanup(() => restarted.dispose());
      const again = await signIn(restarted, owner.user.email);
      expect(await pendingApprovals(restarted, again, owner.organizationId, sessionId)).toEqual([]);
      expect(await getApproval(restarted, again, request.id)).toMatchObject({
        decision: 'expired',
        decidedBy: { kind: 'sessiondesk', reason: 'server-restarted' },
      });
      const recovered = await sessionNow(restarted, again, sessionId);
      expect(recovered.agentState).toBeUndefined();
      expect(approvalNotices(recovered)).toContain(
        'Session Desk stopped while the request waited, and its run ended with it: the request expired.',
      );
    },
  );
});
