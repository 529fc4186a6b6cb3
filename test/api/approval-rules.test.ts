import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import {
  AgentSettingsResponseSchema,
  ApprovalRulesPreviewSchema,
  type ApprovalRule,
} from '../../src-shared/index.js';
import {
  decide,
  firstRequest,
  getApproval,
  pendingApprovals,
  sessionNow,
  transcriptDecisions,
} from '../helpers/approvals.js';
import { useCleanups } from '../helpers/cleanups.js';
import { openEventStream } from '../helpers/events.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  signIn,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

/**
 * A workspace's approval rules over HTTP: checked when written, kept, answered with the agent,
 * tried on recent requests before they are saved, and deciding the demo agent's requests.
 */

const cleanup = useCleanups();

async function setUp(options: { agentPaceMs?: number } = {}) {
  const server = await startTestServer(options);
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const path = `/api/workspaces/${owner.organizationId}/agent`;
  return { server, owner, cookie: owner.user.cookie, path };
}

async function settingsOf(server: TestServer, cookie: string, path: string) {
  const got = await asUser(server, cookie, 'GET', path);
  expect(got.status, await got.clone().text()).toBe(200);
  return AgentSettingsResponseSchema.parse(await got.json()).settings;
}

/** The 400's details, as `path: message` lines. */
async function refusal(response: Response): Promise<string[]> {
  expect(response.status, await response.clone().text()).toBe(400);
  const body = (await response.json()) as { error: { details?: { path: string; message: string }[] } };
  return (body.error.details ?? []).map((d) => `${d.path}: ${d.message}`);
}

const RULES: ApprovalRule[] = [
  { kind: 'read', decision: 'allow' },
  { kind: 'edit', pattern: 'src/**', decision: 'allow' },
  { kind: 'execute', pattern: 'rm *', decision: 'reject' },
  { kind: 'execute', decision: 'ask' },
];

describe('approval rules as a setting', () => {
  it('are kept in order, answered with the agent, and removed when left out', async () => {
    const { server, owner, cookie, path } = await setUp();
    const put = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvalRules: RULES });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(AgentSettingsResponseSchema.parse(await put.json()).settings.approvalRules).toEqual(RULES);
    expect((await settingsOf(server, cookie, path)).approvalRules).toEqual(RULES);
    // A member reads them; only an owner changes them.
    const member = await seedWorkspace(server, 'member');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    expect((await settingsOf(server, member.user.cookie, path)).approvalRules).toEqual(RULES);
    const byMember = await asUser(server, member.user.cookie, 'PUT', path, {
      agent: 'demo',
      approvalRules: [],
    });
    expect(byMember.status).toBe(403);

    // Kept across a restart of the server.
    await server.stop();
    const again = await startTestServer({ dataDir: server.dataDir });
    cleanup(() => again.dispose());
    const cookieAgain = await signIn(again, owner.user.email);
    expect((await settingsOf(again, cookieAgain, path)).approvalRules).toEqual(RULES);

    // The PUT replaces the whole setting: without them, there are none; an empty list is none too.
    const without = await asUser(again, cookieAgain, 'PUT', path, { agent: 'demo', approvals: 'ask' });
    expect(without.status).toBe(200);
    expect((await settingsOf(again, cookieAgain, path)).approvalRules).toBeUndefined();
    await asUser(again, cookieAgain, 'PUT', path, { agent: 'demo', approvalRules: [] });
    expect(await settingsOf(again, cookieAgain, path)).toEqual({ agent: 'demo' });
  });

  it('are refused, saying which rule and why, when they cannot mean anything', async () => {
    const { server, cookie, path } = await setUp();
    const put = (approvalRules: unknown) =>
      asUser(server, cookie, 'PUT', path, { agent: 'demo', approvalRules });
    expect(await refusal(await put([{ kind: 'read', decision: 'allow' }, { decision: 'reject' }]))).toEqual([
      'body.approvalRules.1.kind: a rule names a kind, a pattern or both: every request no rule matches is decided by `approvals` already',
    ]);
    expect((await refusal(await put([{ kind: 'write', decision: 'allow' }])))[0]).toMatch(
      /^body\.approvalRules\.0\.kind: /u,
    );
    expect((await refusal(await put([{ kind: 'read', decision: 'sometimes' }])))[0]).toMatch(
      /^body\.approvalRules\.0\.decision: /u,
    );
    expect((await refusal(await put([{ kind: 'read', pattern: '', decision: 'allow' }])))[0]).toContain(
      'must not be empty',
    );
    expect(
      (await refusal(await put([{ kind: 'read', pattern: 'x'.repeat(201), decision: 'allow' }])))[0],
    ).toMatch(/^body\.approvalRules\.0\.pattern: /u);
    expect((await refusal(await put([{ kind: 'think', pattern: 'x', decision: 'allow' }])))[0]).toContain(
      'has no command, path or URL for a pattern to match',
    );
    expect((await refusal(await put([{ kind: 'read', decision: 'allow', why: 'because' }])))[0]).toContain(
      'why',
    );
    expect(
      (await refusal(await put(Array.from({ length: 51 }, () => ({ kind: 'read', decision: 'allow' })))))[0],
    ).toContain('at most 50 rules');
    expect((await refusal(await put({ kind: 'read', decision: 'allow' })))[0]).toMatch(
      /^body\.approvalRules: /u,
    );
    // Nothing refused was kept.
    expect((await settingsOf(server, cookie, path)).approvalRules).toBeUndefined();
  });
});

describe('the demo agent with approval rules', () => {
  it('a rule allows its edit and rejects its note at once; its commit waits in the inbox alone', async () => {
    const { server, owner, cookie, path } = await setUp({ agentPaceMs: 0 });
    const rules: ApprovalRule[] = [
      { kind: 'edit', pattern: 'src/**', decision: 'allow' },
      { kind: 'edit', pattern: 'notes/*', decision: 'reject' },
      { kind: 'execute', decision: 'ask' },
    ];
    // `approvals` stays `auto`: the rules alone make the commit wait.
    const put = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvalRules: rules });
    expect(put.status, await put.clone().text()).toBe(200);
    const stream = await openEventStream(`${server.url}/api/events?organizationId=${owner.organizationId}`, {
      'x-api-key': owner.apiKey,
    });
    cleanup(() => stream.close());
    const { id } = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Add retries to the upload client',
    });
    const dir = sandboxPath(server.sandboxRoot, id);

    const commit = await firstRequest(server, cookie, owner.organizationId, id);
    expect(commit).toMatchObject({
      title: 'git add --all && git commit --no-verify -m "Add retries to the upload client"',
      tool: {
        kind: 'execute',
        command: 'git add --all && git commit --no-verify -m "Add retries to the upload client"',
      },
    });
    expect((await sessionNow(server, cookie, id)).agentState).toBe('needs_input');
    // The edit the rule allowed is made; the note it rejected is not written.
    expect(readFileSync(join(dir, 'src/config.js'), 'utf8')).not.toContain('retries: 0,');
    expect(existsSync(join(dir, 'notes'))).toBe(false);

    const waiting = await sessionNow(server, cookie, id);
    const [edit, note] = transcriptDecisions(waiting);
    expect(edit).toMatchObject({
      decision: 'allow_once',
      decidedBy: { kind: 'rule', index: 0, rule: rules[0] },
    });
    expect(note).toMatchObject({
      decision: 'reject_once',
      decidedBy: { kind: 'rule', index: 1, rule: rules[1] },
      message: "This workspace's approval rules reject this request (rule 2: reject edit `notes/*`).",
    });
    // Each is a request of its own, decided when it was made, the paths as the rules saw them.
    const editRecord = await getApproval(server, cookie, edit!.id);
    expect(editRecord).toMatchObject({
      title: 'Edit src/config.js',
      tool: { kind: 'edit', name: 'Edit', paths: ['src/config.js'] },
      decidedBy: { kind: 'rule', index: 0 },
    });
    expect(editRecord.decidedAt).toBe(editRecord.createdAt);
    // The agent was told why the note was refused.
    const refused = waiting.messages
      .flatMap((m) => (m.type === 'assistant' ? m.message.content : []))
      .find((b) => b.type === 'tool_result' && JSON.stringify(b.content).includes('was not written'));
    expect(JSON.stringify(refused)).toContain("This workspace's approval rules reject this request");

    // Only the commit reached the inbox and was announced as waiting.
    expect((await pendingApprovals(server, cookie, owner.organizationId, id)).map((a) => a.id)).toEqual([
      commit.id,
    ]);
    const created = () =>
      stream.events.flatMap((e) => {
        const data = e.data as { type: string; approval?: { id: string } };
        return data.type === 'approval.created' ? [data.approval?.id] : [];
      });
    await until(created, (ids) => ids.length > 0);
    expect(created()).toEqual([commit.id]);
    // Nor did the session need anyone before the commit asked.
    const types = stream.events.map((e) => {
      const data = e.data as { type: string; session?: { agentState?: string } };
      return data.session?.agentState === 'needs_input' ? 'needs_input' : data.type;
    });
    expect(types.indexOf('needs_input')).toBeGreaterThan(types.indexOf('approval.created'));

    await decide(server, cookie, commit.id, { decision: 'allow_once' });
    const done = await until(
      () => sessionNow(server, cookie, id),
      (s) => s.messages.at(-1)?.type === 'result',
      30_000,
    );
    expect(done.status).toBe('completed');
    expect(transcriptDecisions(done).map((d) => d.decidedBy.kind)).toEqual(['rule', 'rule', 'user']);
  });
});

describe('the preview of draft rules', () => {
  it("counts what each would have decided of the workspace's latest requests, and the rest", async () => {
    const { server, owner, cookie, path } = await setUp({ agentPaceMs: 0 });
    await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvals: 'ask' });
    const { id } = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Add retries to the upload client',
    });
    // The demo agent asks three times: its edit, its note, its commit.
    for (let asked = 0; asked < 3; asked += 1) {
      const request = await firstRequest(server, cookie, owner.organizationId, id);
      await decide(server, cookie, request.id, { decision: 'allow_once' });
    }
    const preview = (body: unknown) =>
      asUser(server, cookie, 'POST', `/api/workspaces/${owner.organizationId}/approval-rules/preview`, body);
    const tried = await preview({
      approvalRules: [
        { kind: 'edit', pattern: 'src/**', decision: 'allow' },
        { kind: 'execute', decision: 'reject' },
        { kind: 'fetch', decision: 'ask' },
      ],
    });
    expect(tried.status, await tried.clone().text()).toBe(200);
    expect(ApprovalRulesPreviewSchema.parse(await tried.json())).toEqual({
      considered: 3,
      rules: [
        { decided: 1, examples: ['Edit src/config.js'] },
        {
          decided: 1,
          examples: ['git add --all && git commit --no-verify -m "Add retries to the upload client"'],
        },
        { decided: 0, examples: [] },
      ],
      rest: { count: 1, decision: 'ask' },
    });
    // What `approvals` would decide for the rest may be tried too; nothing is saved.
    const auto = await preview({ approvalRules: [], approvals: 'auto' });
    expect(await auto.json()).toEqual({ considered: 3, rules: [], rest: { count: 3, decision: 'allow' } });
    expect((await settingsOf(server, cookie, path)).approvalRules).toBeUndefined();

    // Checked as the setting is; only the workspace's members, signed in.
    expect((await refusal(await preview({ approvalRules: [{ decision: 'allow' }] })))[0]).toMatch(
      /^body\.approvalRules\.0\.kind: /u,
    );
    const stranger = await seedWorkspace(server, 'stranger');
    const theirs = await asUser(
      server,
      stranger.user.cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/approval-rules/preview`,
      { approvalRules: [] },
    );
    expect(theirs.status).toBe(403);
    const byKey = await withKey(
      server,
      owner.apiKey,
      'POST',
      `/api/workspaces/${owner.organizationId}/approval-rules/preview`,
      { approvalRules: [] },
    );
    expect(byKey.status).not.toBe(200);
  });
});
