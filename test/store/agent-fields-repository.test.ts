import { beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import type { ApprovalRecord } from '../../src-main/store/approvals.js';
import type { AgentFields } from '../../src-main/store/agent-fields.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { addAdasSession, useSqlJsStore } from '../helpers/storage.js';

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
const tokens = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

const asked: Omit<ApprovalRecord, 'sessionId' | 'workspaceId'> = {
  id: 'apr_decided',
  agent: 'claude-code',
  createdAt: later(1),
  expiresAt: later(31),
  title: 'Run the tests',
  tool: { kind: 'execute', name: 'Bash', input: { command: 'npm test' } },
  options: [
    { id: 'allow', kind: 'allow_once', label: 'Allow' },
    { id: 'reject', kind: 'reject_once', label: 'Reject' },
  ],
  decidedAt: later(2),
  decision: 'allow_once',
  optionId: 'allow',
  decidedBy: { kind: 'user', userId: 'usr_ada', name: 'Ada' },
};

/** What an export says of a session's agents: two runs in one conversation, one request decided, one pending. */
const exported: AgentFields = {
  agent: 'claude-code',
  conversation: { kind: 'claude-code', id: 'conv-exported' },
  usage: { ...tokens(30, 12), costUsd: 0.25, costUnknown: { runs: 1, models: ['made-up-model'] } },
  runs: [
    {
      kind: 'claude-code',
      conversationId: 'conv-exported',
      endedAt: later(3),
      usage: { ...tokens(10, 4), costUsd: 0.25 },
    },
    {
      kind: 'claude-code',
      conversationId: 'conv-exported',
      endedAt: later(4),
      usage: { ...tokens(20, 8), costUnknown: { runs: 1, models: ['made-up-model'] } },
    },
  ],
  approvals: [
    asked,
    {
      ...asked,
      id: 'apr_pending',
      createdAt: later(5),
      expiresAt: later(35),
      decidedAt: undefined,
      decision: undefined,
      optionId: undefined,
      decidedBy: undefined,
    },
  ],
};

/**
 * The same agent fields set on either database give the same session: its agent, conversation
 * and usage as given, its runs in place of those it had, a request still pending arriving expired.
 */
function agentFieldsContract(open: () => Promise<Storage>) {
  let storage: Storage;
  beforeAll(async () => {
    storage = await open();
    await storage.write(async (tx) => {
      await addAdasSession(tx, { id: 'ses_one', title: 'One', model: 'claude-sonnet-4-5', createdAt: AT });
      // A run the session had before: the exported runs take its place.
      await tx.sessions.recordRun('ses_one', 'org_a', {
        kind: 'codex',
        conversationId: 'conv-before',
        endedAt: later(1),
        usage: { ...tokens(100, 100), costUsd: 1 },
      });
    });
  });

  it('sets the agent, conversation and usage as given, replaces the runs, and expires a pending request', async () => {
    await storage.write((tx) => tx.sessions.setAgentFields('ses_one', 'org_a', exported));
    const { sessions, approvals } = storage.repos;
    const row = await sessions.find('ses_one');
    expect(row?.agentKind).toBe('claude-code');
    expect(row?.usage).toEqual(exported.usage);
    expect(await sessions.conversation('ses_one')).toEqual({ kind: 'claude-code', id: 'conv-exported' });
    expect(await sessions.conversationUsage('ses_one', 'conv-exported')).toEqual(tokens(30, 12));
    expect(await sessions.conversationUsage('ses_one', 'conv-before')).toEqual(tokens(0, 0));
    expect(await approvals.ofSession('ses_one')).toEqual([
      { ...asked, sessionId: 'ses_one', workspaceId: 'org_a' },
      {
        ...asked,
        id: 'apr_pending',
        createdAt: later(5),
        expiresAt: later(35),
        sessionId: 'ses_one',
        workspaceId: 'org_a',
        decidedAt: later(35),
        decision: 'expired',
        optionId: undefined,
        decidedBy: { kind: 'sessiondesk', reason: 'imported' },
      },
    ]);
    expect(await approvals.pending('org_a', 'ses_one')).toEqual([]);

    // Set again (a later part completing the session), the runs are there once, not twice.
    await storage.write((tx) => tx.sessions.setAgentFields('ses_one', 'org_a', exported));
    expect(await sessions.conversationUsage('ses_one', 'conv-exported')).toEqual(tokens(30, 12));
    expect(await approvals.ofSession('ses_one')).toHaveLength(2);
  });

  it('clears what an export does not say: no agent, conversation, usage or runs', async () => {
    await storage.write((tx) => tx.sessions.setAgentFields('ses_one', 'org_a', {}));
    const row = await storage.repos.sessions.find('ses_one');
    expect(row).not.toBeNull();
    expect(row?.agentKind).toBeUndefined();
    expect(row?.usage).toBeUndefined();
    expect(await storage.repos.sessions.conversation('ses_one')).toBeNull();
    expect(await storage.repos.sessions.conversationUsage('ses_one', 'conv-exported')).toEqual(tokens(0, 0));
  });
}

describe("a session's agent fields on sql.js", () => {
  const sqljs = useSqlJsStore('sessiondesk-agent-fields-');
  agentFieldsContract(async () => storageOf(await sqljs.open()));
});

describe("a session's agent fields on PostgreSQL", requireTools(postgresTool()), () => {
  const pg = useMigratedPool();
  agentFieldsContract(async () => createPostgresStorage(await pg.open()));
});
