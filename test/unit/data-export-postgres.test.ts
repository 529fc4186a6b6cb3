import { beforeAll, describe, expect, it } from 'vitest';
import { exportChunks } from '../../src-main/data/export.js';
import type { ExportFormat } from '../../src-main/data/format.js';
import type { TranscriptReads } from '../../src-main/sessions/transcript-reads.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import type { ApprovalRecord } from '../../src-main/store/approvals.js';
import { readsOf } from '../../src-main/store/sqljs-storage.js';
import type { Repos } from '../../src-main/store/storage.js';
import type { Message } from '../../src-shared/sessions.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { FULL_TASKS, FULL_TRANSCRIPT } from '../helpers/seed.js';
import { useSqlJsStore } from '../helpers/storage.js';

const AT = '2026-11-27T08:00:00.000Z';
const later = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const tokens = (input: number) => ({
  inputTokens: input,
  outputTokens: 2,
  cacheReadTokens: 3,
  cacheWriteTokens: 4,
});

const approval: ApprovalRecord = {
  id: 'apr_one',
  sessionId: 'ses_b',
  workspaceId: 'org_a',
  agent: 'claude-code',
  createdAt: later(40),
  expiresAt: later(400),
  title: 'Run the tests',
  tool: { kind: 'execute', name: 'Bash', input: { command: 'npm test' } },
  options: [{ id: 'allow', kind: 'allow_once', label: 'Allow' }],
  decidedAt: later(41),
  decision: 'allow_once',
  optionId: 'allow',
  decidedBy: { kind: 'user', userId: 'usr_grace', name: 'Grace' },
};

/**
 * The same workspace written through Storage on either database: two people, three sessions
 * with messages (some sent by each), tasks, a merged pull request, a conversation, runs (some
 * ending at one instant, recorded against their order) and a decided request.
 */
async function writeWorkspace(tx: Repos): Promise<void> {
  for (const [id, email, name] of [
    ['usr_ada', 'ada@example.com', 'Ada'],
    ['usr_grace', 'grace@example.com', 'Grace'],
  ] as const) {
    await tx.users.insert({ id, email, name, passwordHash: 'h', createdAt: AT });
  }
  await tx.workspaces.insert({ id: 'org_a', name: 'Acme', createdAt: AT });
  await tx.workspaces.addMember('org_a', 'usr_ada', 'owner', AT);
  await tx.workspaces.addMember('org_a', 'usr_grace', 'member', AT);
  for (const [n, id] of ['ses_a', 'ses_b', 'ses_c'].entries()) {
    await tx.sessions.insert({
      id,
      workspaceId: 'org_a',
      authorId: n === 1 ? 'usr_grace' : 'usr_ada',
      title: `Session ${id} “quoted” ✓`,
      model: 'claude-opus-4-6',
      createdAt: later(n),
      baseBranch: 'main',
      ...(n === 2 ? {} : { repoUrl: 'https://example.com/acme/app.git', initialMessage: 'Fix the build' }),
    });
  }
  for (const [i, message] of FULL_TRANSCRIPT.entries()) {
    const author = message.type === 'user' ? (i % 2 === 0 ? 'usr_ada' : 'usr_grace') : null;
    await tx.sessions.appendMessage('ses_a', 'org_a', message, author, later(10 + i));
  }
  const reply: Message = { type: 'assistant', message: { content: [{ type: 'text', text: 'Done.' }] } };
  await tx.sessions.appendMessage('ses_b', 'org_a', reply, null, later(20));
  await tx.sessions.replaceTasks('ses_a', FULL_TASKS);
  await tx.sessions.update('ses_c', { status: 'failed' }, later(30));
  await tx.sessions.updatePullRequest(
    'ses_b',
    { number: 7, url: 'https://example.com/acme/app/pull/7', status: 'merged', mergedAt: later(50) },
    later(50),
  );
  await tx.sessions.setAgentKind('ses_b', 'claude-code');
  await tx.sessions.setConversation('ses_b', 'claude-code', 'conv-b');
  for (const [endedAt, input, conversationId, costUsd] of [
    [later(45), 30, 'conv-b', 0.5],
    [later(45), 10, 'conv-b', 0.25],
    [later(44), 20, 'conv-b', undefined],
    [later(45), 10, 'Conv-b', 0.25],
  ] as const) {
    await tx.sessions.recordRun('ses_b', 'org_a', {
      kind: 'claude-code',
      conversationId,
      endedAt,
      usage: { ...tokens(input), ...(costUsd === undefined ? {} : { costUsd }) },
      model: 'made-up-model',
    });
  }
  await tx.approvals.save(approval);
}

async function exported(source: TranscriptReads, format: ExportFormat): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of exportChunks(source, 'org_a', format, later(60))) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}

describe('an export from PostgreSQL and from sql.js', requireTools(postgresTool()), () => {
  const sqljs = useSqlJsStore('sessiondesk-export-both-');
  const pg = useMigratedPool();
  let desktop: TranscriptReads;
  let team: TranscriptReads;
  beforeAll(async () => {
    desktop = readsOf(await sqljs.open());
    const postgres = createPostgresStorage(await pg.open());
    team = { storage: postgres, transcripts: postgres.transcripts };
    for (const { storage } of [desktop, team]) await storage.write(writeWorkspace);
  });

  it('is the same, byte for byte, in either format, with everything a session holds', async () => {
    for (const format of ['ndjson', 'json'] as const) {
      const [fromDesktop, fromTeam] = await Promise.all([exported(desktop, format), exported(team, format)]);
      expect(fromTeam.toString('utf8')).toBe(fromDesktop.toString('utf8'));
      expect(fromTeam.equals(fromDesktop)).toBe(true);
    }
    const lines = (await exported(team, 'ndjson'))
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const heads = lines.filter((line) => line.type === 'session');
    expect(heads.map((head) => head.id)).toEqual(['ses_c', 'ses_b', 'ses_a']);
    const [, b, a] = heads;
    expect(a.tasks).toEqual(FULL_TASKS);
    expect(a.messageCount).toBe(FULL_TRANSCRIPT.length + 1);
    expect(b).toMatchObject({ prMergedAt: later(50), conversation: { kind: 'claude-code', id: 'conv-b' } });
    expect(
      b.runs.map((r: { endedAt: string; conversationId: string; usage: { inputTokens: number } }) => [
        r.endedAt,
        r.conversationId,
        r.usage.inputTokens,
      ]),
    ).toEqual([
      [later(44), 'conv-b', 20],
      [later(45), 'Conv-b', 10],
      [later(45), 'conv-b', 10],
      [later(45), 'conv-b', 30],
    ]);
    expect(b.approvals).toEqual([expect.objectContaining({ id: 'apr_one', decision: 'allow_once' })]);
    const authorEmails = lines
      .filter((line) => line.type === 'message' && line.authorEmail)
      .map((line) => line.authorEmail);
    expect(new Set(authorEmails)).toEqual(new Set(['ada@example.com', 'grace@example.com']));
  });
});
