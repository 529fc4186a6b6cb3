import { beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/index.js';
import { postgresUsers, postgresWorkspaces } from '../../src-main/store-postgres/accounts.js';
import { CHUNK_BYTES, postgresSessions } from '../../src-main/store-postgres/sessions.js';
import { MessageTooLargeError } from '../../src-main/store/errors.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Repos } from '../../src-main/store/storage.js';
import { encodeFrame, MARK_EVERY, TRANSCRIPT_MAGIC } from '../../src-main/store/transcript-format.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { useSqlJsStore } from '../helpers/storage.js';

type Used = Pick<Repos, 'users' | 'workspaces' | 'sessions'>;

interface Opened {
  repos: Used;
  /** How the database keeps a text holding U+0000 (PostgreSQL's text cannot hold it). */
  keptText(text: string): string;
  /** Runs `fn` as one write (a transaction on PostgreSQL). */
  write<T>(fn: (tx: Used) => Promise<T>): Promise<T>;
  /** The transcript's committed bytes as the store keeps them. */
  transcript(sessionId: string): Promise<Buffer>;
}

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
const user = (text: string): Message => ({ type: 'user', message: { content: text } });
const said = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

/** What a transcript holding these messages is, byte for byte, whichever store keeps it. */
function expectedTranscript(messages: Array<[Message, string]>): Buffer {
  return Buffer.concat([
    TRANSCRIPT_MAGIC,
    ...messages.map(([message, at]) => encodeFrame(Buffer.from(JSON.stringify(message)), Date.parse(at))),
  ]);
}

/**
 * The same questions to the sessions' repository on either database, with the same answers:
 * a session and its transcript, its people, runs and usage, the list with its filters, pages
 * and stats.
 */
function sessionsContract(open: () => Promise<Opened>) {
  let db: Opened;
  beforeAll(async () => {
    db = await open();
    await db.write(async (tx) => {
      await tx.users.insert({
        id: 'usr_ada',
        email: 'ada@example.com',
        name: 'Ada',
        passwordHash: 'h',
        createdAt: AT,
      });
      await tx.users.insert({
        id: 'usr_bob',
        email: 'bob@example.com',
        name: 'Bob',
        passwordHash: 'h',
        createdAt: AT,
      });
      await tx.workspaces.insert({ id: 'org_a', name: 'A', createdAt: AT });
      await tx.workspaces.insert({ id: 'org_b', name: 'B', createdAt: AT });
    });
  });
  const newSession = (id: string, createdAt: string, extra: Record<string, string> = {}) =>
    db.write((tx) =>
      tx.sessions.insert({
        id,
        workspaceId: 'org_a',
        authorId: 'usr_ada',
        title: `Session ${id}`,
        model: 'claude-sonnet-4-5',
        createdAt,
        baseBranch: 'main',
        ...extra,
      }),
    );

  it('keeps a session with its first message, its transcript byte for byte, marks and prompt authors', async () => {
    await newSession('ses_one', AT, {
      initialMessage: 'Fix the flaky test',
      repoUrl: 'https://github.com/acme/api.git',
      repository: 'acme/api',
    });
    const sent: Array<[Message, string, string | null]> = [[user('Fix the flaky test'), AT, 'usr_ada']];
    for (let i = 1; i <= MARK_EVERY + 1; i++) {
      const [message, author] = i % 2 === 1 ? [said(`Step ${i}`), null] : [user(`Next ${i}`), 'usr_bob'];
      const at = later(i);
      expect(await db.write((tx) => tx.sessions.appendMessage('ses_one', 'org_a', message, author, at))).toBe(
        i + 1,
      );
      sent.push([message, at, author]);
    }
    const expected = expectedTranscript(sent.map(([m, at]) => [m, at]));
    expect(await db.transcript('ses_one')).toEqual(expected);
    expect(await db.repos.sessions.extent('ses_one')).toEqual({
      messageCount: MARK_EVERY + 2,
      bytes: expected.length,
    });
    expect(await db.repos.sessions.markAtOrBefore('ses_one', 1)).toEqual({
      seq: 1,
      offset: TRANSCRIPT_MAGIC.length,
    });
    const second = await db.repos.sessions.markAtOrBefore('ses_one', MARK_EVERY + 2);
    expect(second?.seq).toBe(MARK_EVERY + 1);
    expect(expected.readUInt32LE(second!.offset)).toBe(JSON.stringify(sent[MARK_EVERY]![0]).length);
    expect(await db.repos.sessions.markAtOrBefore('ses_nothing', 1)).toBeNull();
    const authors = await db.repos.sessions.promptAuthors('ses_one');
    expect(authors.get(1)).toBe('usr_ada');
    expect(authors.get(3)).toBe('usr_bob');
    expect(authors.has(2)).toBe(false);
    expect(await db.repos.sessions.agentInput('ses_one')).toEqual({
      repoUrl: 'https://github.com/acme/api.git',
      baseBranch: 'main',
      firstMessage: 'Fix the flaky test',
    });
    expect(await db.repos.sessions.agentInput('ses_nothing')).toBeNull();
  });

  it('refuses a message larger than a session stores, and keeps what it had', async () => {
    const before = await db.repos.sessions.extent('ses_one');
    const huge = user('x'.repeat(16 * 1024 * 1024));
    await expect(
      db.write((tx) => tx.sessions.appendMessage('ses_one', 'org_a', huge, null, later(100))),
    ).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(await db.repos.sessions.extent('ses_one')).toEqual(before);
  });

  it('keeps a message larger than a chunk whole, and the next one after it', async () => {
    await newSession('ses_big', later(200));
    const big = said('y'.repeat(CHUNK_BYTES * 2 + 123));
    await db.write((tx) => tx.sessions.appendMessage('ses_big', 'org_a', big, null, later(201)));
    await db.write((tx) =>
      tx.sessions.appendMessage('ses_big', 'org_a', user('after'), 'usr_ada', later(202)),
    );
    expect(await db.transcript('ses_big')).toEqual(
      expectedTranscript([
        [big, later(201)],
        [user('after'), later(202)],
      ]),
    );
  });

  it('answers a session as a summary: previews, status, stop, tasks, branch, pull request, runs and usage', async () => {
    await db.write(async (tx) => {
      await tx.sessions.setBranch('ses_one', 'agent/fix-flaky', later(300));
      await tx.sessions.replaceTasks('ses_one', [
        { id: 't1', title: 'Read', status: 'completed' },
        { id: 't2', title: 'Fix', status: 'in_progress' },
      ]);
      await tx.sessions.setAgentKind('ses_one', 'claude-code', 'sandbox');
      await tx.sessions.setAgentState('ses_one', 'running');
      await tx.sessions.setConversation('ses_one', 'claude-code', 'conv-1');
      const usage = {
        inputTokens: 1000,
        outputTokens: 200,
        cacheReadTokens: 3_000_000_000,
        cacheWriteTokens: 4,
      };
      await tx.sessions.recordRun('ses_one', 'org_a', {
        kind: 'claude-code',
        conversationId: 'conv-1',
        endedAt: later(301),
        usage: { ...usage, costUsd: 0.1234567891 },
      });
      await tx.sessions.recordRun('ses_one', 'org_a', {
        kind: 'codex',
        conversationId: 'conv-1',
        endedAt: later(302),
        model: 'made-up-model',
        usage: { inputTokens: 5, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0 },
      });
      await tx.sessions.appendMessage(
        'ses_one',
        'org_a',
        {
          type: 'result',
          subtype: 'success',
          is_error: false,
          result: 'Stopped.',
          duration_ms: 1,
          num_turns: 1,
          stopped: true,
        },
        null,
        later(303),
      );
      await tx.sessions.update('ses_one', { status: 'completed', title: 'Flaky test fixed' }, later(304));
      await tx.sessions.updatePullRequest(
        'ses_one',
        { number: 7, url: 'https://github.com/acme/api/pull/7', status: 'merged' },
        later(305),
      );
    });
    const row = await db.repos.sessions.find('ses_one');
    expect(row).toEqual({
      id: 'ses_one',
      workspaceId: 'org_a',
      title: 'Flaky test fixed',
      status: 'completed',
      createdAt: AT,
      updatedAt: later(305),
      model: 'claude-sonnet-4-5',
      authorId: 'usr_ada',
      authorName: 'Ada',
      repository: 'acme/api',
      branch: 'agent/fix-flaky',
      prNumber: 7,
      prUrl: 'https://github.com/acme/api/pull/7',
      prStatus: 'merged',
      messageCount: MARK_EVERY + 3,
      transcriptBytes: (await db.transcript('ses_one')).length,
      firstPreview: 'Fix the flaky test',
      lastPreview: 'Stopped.',
      agentKind: 'claude-code',
      isolation: 'sandbox',
      agentState: 'running',
      stopped: true,
      usage: {
        inputTokens: 1005,
        outputTokens: 206,
        cacheReadTokens: 3_000_000_000,
        cacheWriteTokens: 4,
        costUsd: 0.123457,
        costUnknown: { runs: 1, models: ['made-up-model'] },
      },
    });
    expect(await db.repos.sessions.pullRequestMergedAt('ses_one')).toBe(later(305));
    expect(await db.repos.sessions.tasks('ses_one')).toEqual([
      { id: 't1', title: 'Read', status: 'completed' },
      { id: 't2', title: 'Fix', status: 'in_progress' },
    ]);
    expect(await db.repos.sessions.conversation('ses_one')).toEqual({ kind: 'claude-code', id: 'conv-1' });
    expect(await db.repos.sessions.conversationUsage('ses_one', 'conv-1')).toEqual({
      inputTokens: 1005,
      outputTokens: 206,
      cacheReadTokens: 3_000_000_000,
      cacheWriteTokens: 4,
    });
    expect(await db.repos.sessions.agentState('ses_one')).toBe('running');
    expect(await db.repos.sessions.runningIds()).toEqual(['ses_one']);

    // Marked with another status, a stopped session no longer reads as stopped; a PR no longer merged forgets when.
    await db.write(async (tx) => {
      await tx.sessions.update('ses_one', { status: 'failed' }, later(306));
      await tx.sessions.setAgentState('ses_one', null);
      await tx.sessions.updatePullRequest('ses_one', { number: 7, url: 'u', status: 'open' }, later(307));
    });
    const after = await db.repos.sessions.find('ses_one');
    expect(after?.stopped).toBeUndefined();
    expect(after?.agentState).toBeUndefined();
    expect(await db.repos.sessions.pullRequestMergedAt('ses_one')).toBeUndefined();
    expect(await db.repos.sessions.find('ses_nothing')).toBeNull();
    expect(await db.repos.sessions.runningIds()).toEqual([]);
  });

  it('lists a workspace in the order of creation, newest first, with filters, pages, counts and repositories', async () => {
    // Two created in the same millisecond: the id breaks the tie, byte by byte ('Z' before 'a').
    await newSession('ses_Zed', later(400), { repository: 'Acme/Web', initialMessage: 'Polish the header' });
    await newSession('ses_abc', later(400), { repository: 'other/tool' });
    await db.write((tx) => tx.sessions.setAgentKind('ses_abc', 'acp', null, 'opencode'));
    const ids = async (filters = {}, page = {}) =>
      (await db.repos.sessions.list('org_a', filters, page)).map((s) => s.id);
    expect(await ids()).toEqual(['ses_abc', 'ses_Zed', 'ses_big', 'ses_one']);
    expect(await ids({}, { limit: 2 })).toEqual(['ses_abc', 'ses_Zed']);
    expect(await ids({}, { after: { createdAt: later(400), id: 'ses_abc' } })).toEqual([
      'ses_Zed',
      'ses_big',
      'ses_one',
    ]);
    expect(await ids({ repository: 'acme' })).toEqual(['ses_Zed', 'ses_one']);
    expect(await ids({ repository: 'ACME/web' })).toEqual(['ses_Zed']);
    expect(await ids({ q: 'HEADER' })).toEqual(['ses_Zed']);
    expect(await ids({ q: 'fixed' })).toEqual(['ses_one']);
    expect(await ids({ status: 'failed' })).toEqual(['ses_one']);
    expect(await ids({ agent: 'acp:opencode' })).toEqual(['ses_abc']);
    expect(await ids({ agent: 'claude-code' })).toEqual(['ses_one']);
    expect(await ids({ source: 'imported' })).toEqual([]);
    expect(await ids({ authorId: 'usr_bob' })).toEqual([]);
    expect(await db.repos.sessions.count('org_a', {})).toBe(4);
    expect(await db.repos.sessions.count('org_a', { repository: 'acme' })).toBe(2);
    expect(await db.repos.sessions.count('org_b', {})).toBe(0);
    expect(await db.repos.sessions.repositories('org_a')).toEqual(['acme/api', 'Acme/Web', 'other/tool']);
    expect((await db.repos.sessions.messageCounts('org_a')).sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([
      { id: 'ses_Zed', messageCount: 1 },
      { id: 'ses_abc', messageCount: 0 },
      { id: 'ses_big', messageCount: 2 },
      { id: 'ses_one', messageCount: MARK_EVERY + 3 },
    ]);
    expect(await db.repos.sessions.messageCounts('org_b')).toEqual([]);
  });

  it('counts the past week: merges, authors, people prompting now, costs real and simulated and unknown', async () => {
    await db.write(async (tx) => {
      await tx.sessions.updatePullRequest('ses_big', { number: 8, url: 'u', status: 'merged' }, later(500));
      await tx.sessions.recordRun('ses_big', 'org_a', {
        kind: 'demo',
        endedAt: later(501),
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.5 },
      });
    });
    expect(await db.repos.sessions.stats('org_a', new Date(later(600)))).toEqual({
      mergesPastWeek: 1,
      authorsPastWeek: 1,
      humansPastWeek: 2,
      humansPromptingNow: 1,
      costPastWeek: 0.123457,
      simulatedCostPastWeek: 0.5,
      costUnknownPastWeek: [{ agent: 'codex', sessions: 1, models: ['made-up-model'] }],
    });
    expect(await db.repos.sessions.stats('org_a', new Date(later(60 * 24 * 30)))).toEqual({
      mergesPastWeek: 0,
      authorsPastWeek: 0,
      humansPastWeek: 0,
      humansPromptingNow: 1,
      costPastWeek: 0,
    });
  });

  it('keeps a message holding U+0000 byte for byte in its transcript, and its preview as the database can', async () => {
    await newSession('ses_nul', later(150));
    const odd = said('before\u0000after');
    await db.write((tx) => tx.sessions.appendMessage('ses_nul', 'org_a', odd, null, later(151)));
    expect(await db.transcript('ses_nul')).toEqual(expectedTranscript([[odd, later(151)]]));
    expect((await db.repos.sessions.find('ses_nul'))?.lastPreview).toBe(db.keptText('before\u0000after'));
  });
}

describe('the sessions repository on sql.js', () => {
  const sqljs = useSqlJsStore('sessiondesk-sessions-');
  sessionsContract(async () => {
    const opened = await sqljs.open();
    const storage = storageOf(opened);
    return {
      repos: storage.repos,
      keptText: (text) => text,
      write: (fn) => storage.write(fn),
      async transcript(sessionId) {
        const { bytes } = await storage.repos.sessions.extent(sessionId);
        const pieces: Buffer[] = [];
        for await (const piece of opened.transcripts.readRaw(sessionId, bytes)) pieces.push(piece);
        return Buffer.concat(pieces);
      },
    };
  });
});

describe('the sessions repository on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = useMigratedPool();
  let pool: Awaited<ReturnType<typeof pg.open>>;
  sessionsContract(async () => {
    pool = await pg.open();
    const reposOf = (q: Parameters<typeof postgresSessions>[0]): Used => ({
      users: postgresUsers(q),
      workspaces: postgresWorkspaces(q),
      sessions: postgresSessions(q),
    });
    return {
      repos: reposOf(pool),
      keptText: (text) => text.replaceAll('\u0000', '\uFFFD'),
      write: (fn) => pool.begin((tx) => fn(reposOf(tx))) as Promise<never>,
      async transcript(sessionId) {
        const rows = await pool<Array<{ start_offset: number; bytes: Buffer }>>`
          SELECT start_offset, bytes FROM transcript_chunks WHERE session_id = ${sessionId} ORDER BY start_offset`;
        let at = 0;
        for (const row of rows) {
          // Rows follow each other without a gap, none larger than a chunk.
          expect(row.start_offset).toBe(at);
          expect(row.bytes.length).toBeLessThanOrEqual(CHUNK_BYTES);
          at += row.bytes.length;
        }
        return Buffer.concat(rows.map((row) => row.bytes));
      },
    };
  });

  it('writes a large message in rows of at most 256 KiB, each compressed with lz4', async () => {
    // A search hit reads its piece from the middle of a row, which PostgreSQL decompresses
    // from the row's start: small rows, and the faster method, make that read short.
    const log = Array.from({ length: 40_000 }, (_, i) => `line ${i} of the build log: ok`).join('\n');
    await pool.begin(async (tx) => {
      const sessions = postgresSessions(tx);
      await sessions.insert({
        id: 'ses_lz4',
        workspaceId: 'org_a',
        authorId: 'usr_ada',
        title: 'A long build log',
        model: 'claude-sonnet-4-5',
        createdAt: AT,
        baseBranch: 'main',
      });
      await sessions.appendMessage('ses_lz4', 'org_a', said(log), null, later(1));
    });
    const rows = await pool<Array<{ length: number; compression: string | null }>>`
      SELECT length(bytes) AS length, pg_column_compression(bytes) AS compression
      FROM transcript_chunks WHERE session_id = 'ses_lz4' ORDER BY start_offset`;
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows.filter((row) => row.length > 256 * 1024)).toEqual([]);
    expect(rows.map((row) => row.compression)).toEqual(rows.map(() => 'lz4'));
  });
});
