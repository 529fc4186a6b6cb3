import { lstat, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import { connect } from '../../src-main/store-postgres/connect.js';
import { postgresHistory } from '../../src-main/store-postgres/history.js';
import { migratePostgres } from '../../src-main/store-postgres/migrations.js';
import type { HistoryFileRecord, HistorySourceRecord } from '../../src-main/store/history.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Repos } from '../../src-main/store/storage.js';
import { linguisticDatabase, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { tempDir } from '../helpers/server.js';
import { eachCallAWrite, useSqlJsStore } from '../helpers/storage.js';

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();

/** The sessions columns the history repository writes, as both databases read them back. */
const SESSION_COLUMNS = `source_kind, source_path, source_cwd, source_conversation_id, agent_kind, acp_agent,
  created_at, updated_at, model, title, branch`;

interface SessionFixture {
  id: string;
  workspaceId: string;
  messages?: number;
  /** The agent CLI's conversation a session Session Desk ran holds. */
  conversationId?: string;
}

/** One database as the contract sees it: its history repository, and the rows it refers to. */
interface HistoryDatabase {
  history: Repos['history'];
  prefix: string;
  user(id: string): Promise<void>;
  workspace(id: string): Promise<void>;
  session(session: SessionFixture & { authorId: string }): Promise<void>;
  sessionColumns(id: string): Promise<Record<string, string | null>>;
}

/**
 * The same questions to the history repository on either database, with the same answers:
 * the folders a workspace follows, how far each file was read, and what an import writes on
 * the sessions it makes.
 */
function historyContract(open: () => Promise<HistoryDatabase>) {
  let db: HistoryDatabase;
  let history: Repos['history'];
  let id: (name: string) => string;
  let source: (name: string, extra?: Partial<HistorySourceRecord>) => HistorySourceRecord;
  beforeAll(async () => {
    db = await open();
    history = db.history;
    id = (name) => `${name}_${db.prefix}`;
    source = (name, extra = {}) => ({
      id: id(name),
      workspaceId: id('org_a'),
      kind: 'claude-code',
      rootDir: `/home/ada/.claude/projects/${name}`,
      authorId: id('usr_ada'),
      paused: false,
      sessionCount: 0,
      messageCount: 0,
      createdAt: AT,
      ...extra,
    });
    await db.user(id('usr_ada'));
    await db.user(id('usr_bob'));
    await db.workspace(id('org_a'));
    await db.workspace(id('org_b'));
  });
  const session = (fixture: SessionFixture) => db.session({ ...fixture, authorId: id('usr_ada') });

  it('answers nothing for a workspace, a source or a file it does not know', async () => {
    expect(await history.sources(id('org_none'))).toEqual([]);
    expect(await history.source(id('hsrc_none'))).toBeNull();
    expect(await history.findSource(id('org_a'), 'codex', '/nowhere')).toBeNull();
    expect(await history.file(id('hsrc_none'), '/nowhere.jsonl')).toBeNull();
    expect(await history.sessionForConversation(id('org_a'), 'conv-none')).toBeNull();
  });

  it('lists sources oldest first, ties by id, all or one workspace', async () => {
    // Inserted out of id order, so that an order by insertion would show; ids compare byte by
    // byte ('B' before 'b'), as a linguistic collation would not.
    await history.insertSource(source('hsrc_listb', { createdAt: later(1) }));
    await history.insertSource(source('hsrc_listB', { createdAt: later(1), kind: 'opencode' }));
    await history.insertSource(source('hsrc_list1', { createdAt: later(2), workspaceId: id('org_b') }));
    await history.insertSource(source('hsrc_list0', { createdAt: later(3), paused: true }));
    expect((await history.sources(id('org_a'))).map((s) => s.id)).toEqual([
      id('hsrc_listB'),
      id('hsrc_listb'),
      id('hsrc_list0'),
    ]);
    expect((await history.sources()).map((s) => s.id)).toEqual([
      id('hsrc_listB'),
      id('hsrc_listb'),
      id('hsrc_list1'),
      id('hsrc_list0'),
    ]);
    expect(await history.source(id('hsrc_listB'))).toEqual(
      source('hsrc_listB', { createdAt: later(1), kind: 'opencode' }),
    );
    expect(await history.source(id('hsrc_list0'))).toEqual(
      source('hsrc_list0', { createdAt: later(3), paused: true }),
    );
  });

  it('finds a source by its workspace, kind and folder, and refuses a second one of them', async () => {
    const odd = `/home/ädä/プロジェクト/🙂/${'deep/'.repeat(800)}end`;
    await history.insertSource(source('hsrc_odd', { kind: 'qwen-code', rootDir: odd }));
    expect(await history.findSource(id('org_a'), 'qwen-code', odd)).toEqual(
      source('hsrc_odd', { kind: 'qwen-code', rootDir: odd }),
    );
    expect(await history.findSource(id('org_a'), 'codex', odd)).toBeNull();
    expect(await history.findSource(id('org_b'), 'qwen-code', odd)).toBeNull();
    await expect(
      history.insertSource(source('hsrc_odd2', { kind: 'qwen-code', rootDir: odd })),
    ).rejects.toThrow();
    await expect(history.insertSource(source('hsrc_odd', { rootDir: '/elsewhere' }))).rejects.toThrow();
    expect(await history.source(id('hsrc_odd2'))).toBeNull();
  });

  it('changes a source’s author and pause, and nothing for a source it does not know', async () => {
    await history.insertSource(source('hsrc_edit'));
    await history.setAuthor(id('hsrc_edit'), id('usr_bob'));
    await history.setPaused(id('hsrc_edit'), true);
    expect(await history.source(id('hsrc_edit'))).toEqual(
      source('hsrc_edit', { authorId: id('usr_bob'), paused: true }),
    );
    await history.setPaused(id('hsrc_edit'), false);
    expect((await history.source(id('hsrc_edit')))?.paused).toBe(false);
    await history.setAuthor(id('hsrc_none'), id('usr_bob'));
    await history.setPaused(id('hsrc_none'), true);
    expect(await history.source(id('hsrc_none'))).toBeNull();
  });

  it('keeps how far a file was read: offsets past 2^31, a file’s own mtime, parser state or none', async () => {
    await history.insertSource(source('hsrc_files'));
    await history.insertSource(source('hsrc_other'));
    await session({ id: id('ses_files'), workspaceId: id('org_a') });
    // A real file's mtime, with the fraction of a millisecond that lstat gives.
    const dir = tempDir('sessiondesk-history-mtime-');
    const path = join(dir, 'session.jsonl');
    await writeFile(path, '{}\n');
    await utimes(path, 1_795_768_612, 1_795_768_612.0055208);
    const { mtimeMs } = await lstat(path);
    await rm(dir, { recursive: true, force: true });
    expect(Number.isInteger(mtimeMs)).toBe(false);

    const long = `/home/ada/.codex/sessions/${'日本語-ü-🙂/'.repeat(300)}rollout.jsonl`;
    const first: HistoryFileRecord = {
      sourceId: id('hsrc_files'),
      path: long,
      sessionId: null,
      offset: 2 ** 31 + 5,
      fingerprint: 'sha256:aa',
      size: 2 ** 40 + 3,
      mtimeMs,
    };
    await history.putFile(first);
    expect(await history.file(id('hsrc_files'), long)).toEqual(first);
    expect(await history.file(id('hsrc_other'), long)).toBeNull();

    const read: HistoryFileRecord = {
      ...first,
      sessionId: id('ses_files'),
      offset: Number.MAX_SAFE_INTEGER - 1,
      fingerprint: 'sha256:bb',
      size: Number.MAX_SAFE_INTEGER,
      mtimeMs: mtimeMs + 1000.25,
      parserState: JSON.stringify({ open: ['tool_1'], text: 'ünï\u2028🙂' }),
    };
    await history.putFile(read);
    expect(await history.file(id('hsrc_files'), long)).toEqual(read);

    const again: HistoryFileRecord = { ...first, sourceId: id('hsrc_other'), offset: 0, size: 0, mtimeMs: 0 };
    await history.putFile(again);
    expect(await history.file(id('hsrc_other'), long)).toEqual(again);
    expect(await history.file(id('hsrc_files'), long)).toEqual(read);

    // Read again from the start: the parser state goes with what it was.
    const restarted: HistoryFileRecord = { ...first, fingerprint: 'sha256:cc' };
    await history.putFile(restarted);
    expect(await history.file(id('hsrc_files'), long)).toEqual(restarted);
  });

  it('refuses a file of a source or a session it does not know', async () => {
    const file: HistoryFileRecord = {
      sourceId: id('hsrc_none'),
      path: '/x.jsonl',
      sessionId: null,
      offset: 0,
      fingerprint: 'f',
      size: 0,
      mtimeMs: 1,
    };
    await expect(history.putFile(file)).rejects.toThrow();
    await history.insertSource(source('hsrc_fk'));
    await expect(
      history.putFile({ ...file, sourceId: id('hsrc_fk'), sessionId: id('ses_none') }),
    ).rejects.toThrow();
    expect(await history.file(id('hsrc_fk'), '/x.jsonl')).toBeNull();
  });

  it('counts a source’s sessions and their messages when it notes an import', async () => {
    await history.insertSource(source('hsrc_count'));
    await history.insertSource(source('hsrc_empty'));
    await session({ id: id('ses_c1'), workspaceId: id('org_a'), messages: 3 });
    await session({ id: id('ses_c2'), workspaceId: id('org_a'), messages: 2 });
    await session({ id: id('ses_c3'), workspaceId: id('org_a'), messages: 7 });
    const file = (path: string, sessionId: string | null): HistoryFileRecord => ({
      sourceId: id('hsrc_count'),
      path,
      sessionId,
      offset: 10,
      fingerprint: 'f',
      size: 10,
      mtimeMs: 1,
    });
    await history.putFile(file('/a.jsonl', id('ses_c1')));
    // A session's subagent file, counted once with it.
    await history.putFile(file('/a/agent-1.jsonl', id('ses_c1')));
    await history.putFile(file('/b.jsonl', id('ses_c2')));
    await history.putFile(file('/remembered.jsonl', null));
    await history.noteImport(id('hsrc_count'), later(5));
    expect(await history.source(id('hsrc_count'))).toEqual(
      source('hsrc_count', { sessionCount: 2, messageCount: 5, lastImportAt: later(5) }),
    );
    await history.putFile(file('/c.jsonl', id('ses_c3')));
    await history.noteImport(id('hsrc_count'), later(6));
    expect(await history.source(id('hsrc_count'))).toMatchObject({
      sessionCount: 3,
      messageCount: 12,
      lastImportAt: later(6),
    });
    await history.noteImport(id('hsrc_empty'), later(7));
    expect(await history.source(id('hsrc_empty'))).toEqual(source('hsrc_empty', { lastImportAt: later(7) }));
    await history.noteImport(id('hsrc_none'), later(8));
    expect(await history.source(id('hsrc_none'))).toBeNull();
  });

  it('forgets a source with its files’ progress, keeping its sessions and other sources’ files', async () => {
    await history.insertSource(source('hsrc_gone'));
    await history.insertSource(source('hsrc_kept'));
    await session({ id: id('ses_gone'), workspaceId: id('org_a'), conversationId: 'conv-gone' });
    const file = (sourceId: string): HistoryFileRecord => ({
      sourceId,
      path: '/same.jsonl',
      sessionId: id('ses_gone'),
      offset: 4,
      fingerprint: 'f',
      size: 4,
      mtimeMs: 1,
    });
    await history.putFile(file(id('hsrc_gone')));
    await history.putFile({ ...file(id('hsrc_gone')), path: '/more.jsonl' });
    await history.putFile(file(id('hsrc_kept')));
    await history.removeSource(id('hsrc_gone'));
    expect(await history.source(id('hsrc_gone'))).toBeNull();
    expect(await history.file(id('hsrc_gone'), '/same.jsonl')).toBeNull();
    expect(await history.file(id('hsrc_gone'), '/more.jsonl')).toBeNull();
    expect(await history.file(id('hsrc_kept'), '/same.jsonl')).toEqual(file(id('hsrc_kept')));
    expect(await history.sessionForConversation(id('org_a'), 'conv-gone')).toEqual({
      id: id('ses_gone'),
      imported: false,
    });
    // Its folder may be followed again.
    await history.insertSource(source('hsrc_gone'));
    expect(await history.file(id('hsrc_gone'), '/same.jsonl')).toBeNull();
    await history.removeSource(id('hsrc_none'));
  });

  it('marks an imported session with where it came from, and the agent it names', async () => {
    await session({ id: id('ses_claude'), workspaceId: id('org_a') });
    await session({ id: id('ses_opencode'), workspaceId: id('org_a') });
    await history.setSessionSource(id('ses_claude'), {
      kind: 'claude-code',
      path: '/home/ada/.claude/projects/p/1.jsonl',
      cwd: '/home/ada/p',
      conversationId: 'conv-claude',
    });
    await history.setSessionSource(id('ses_opencode'), {
      kind: 'opencode',
      path: '/home/ada/opencode.db#ses_1',
    });
    expect(await db.sessionColumns(id('ses_claude'))).toMatchObject({
      source_kind: 'claude-code',
      source_path: '/home/ada/.claude/projects/p/1.jsonl',
      source_cwd: '/home/ada/p',
      source_conversation_id: 'conv-claude',
      agent_kind: 'claude-code',
      acp_agent: null,
    });
    expect(await db.sessionColumns(id('ses_opencode'))).toMatchObject({
      source_kind: 'opencode',
      source_cwd: null,
      source_conversation_id: null,
      agent_kind: 'acp',
      acp_agent: 'opencode',
    });
    expect(await history.sessionForConversation(id('org_a'), 'conv-claude')).toEqual({
      id: id('ses_claude'),
      imported: true,
    });
    expect(await history.sessionForConversation(id('org_b'), 'conv-claude')).toBeNull();
  });

  it('answers a session Session Desk ran before an imported one holding the same conversation', async () => {
    await session({ id: id('ses_a_imported'), workspaceId: id('org_a') });
    await history.setSessionSource(id('ses_a_imported'), {
      kind: 'codex',
      path: '/r.jsonl',
      conversationId: 'conv-both',
    });
    expect(await history.sessionForConversation(id('org_a'), 'conv-both')).toEqual({
      id: id('ses_a_imported'),
      imported: true,
    });
    await session({ id: id('ses_z_ran'), workspaceId: id('org_a'), conversationId: 'conv-both' });
    expect(await history.sessionForConversation(id('org_a'), 'conv-both')).toEqual({
      id: id('ses_z_ran'),
      imported: false,
    });
  });

  it('sets the facts a file gives, and keeps those it does not', async () => {
    await session({ id: id('ses_facts'), workspaceId: id('org_a') });
    const before = await db.sessionColumns(id('ses_facts'));
    await history.setSessionFacts(id('ses_facts'), {});
    expect(await db.sessionColumns(id('ses_facts'))).toEqual(before);
    await history.setSessionFacts(id('ses_facts'), {
      createdAt: later(-60),
      updatedAt: later(30),
      model: 'claude-opus-4',
      title: 'Fix the 日本語 parser 🙂',
      branch: 'feature/x',
    });
    await history.setSessionFacts(id('ses_facts'), { updatedAt: later(40), title: undefined });
    expect(await db.sessionColumns(id('ses_facts'))).toEqual({
      ...before,
      created_at: later(-60),
      updated_at: later(40),
      model: 'claude-opus-4',
      title: 'Fix the 日本語 parser 🙂',
      branch: 'feature/x',
    });
    await history.setSessionFacts(id('ses_none'), { title: 'nobody' });
  });
}

describe('the history repository on sql.js', () => {
  const sqljs = useSqlJsStore('sessiondesk-history-repo-');
  historyContract(async () => {
    const store = await sqljs.open();
    const storage = storageOf(store);
    return {
      history: eachCallAWrite(storage).history,
      prefix: 'sqljs',
      user: (userId) =>
        storage.write((tx) =>
          tx.users.insert({
            id: userId,
            email: `${userId}@example.com`,
            name: userId,
            passwordHash: 'h',
            createdAt: AT,
          }),
        ),
      workspace: (workspaceId) =>
        storage.write((tx) => tx.workspaces.insert({ id: workspaceId, name: workspaceId, createdAt: AT })),
      session: (s) =>
        storage.write(async (tx) => {
          await tx.sessions.insert({
            id: s.id,
            workspaceId: s.workspaceId,
            authorId: s.authorId,
            title: 'Imported',
            model: 'unknown',
            createdAt: AT,
            baseBranch: 'main',
          });
          if (s.conversationId !== undefined)
            await tx.sessions.setConversation(s.id, 'claude-code', s.conversationId);
          for (let n = 0; n < (s.messages ?? 0); n++) {
            await tx.sessions.appendMessage(
              s.id,
              s.workspaceId,
              { type: 'user', message: { content: `m${n}` } },
              null,
              AT,
            );
          }
        }),
      sessionColumns: async (sessionId) => {
        const row = store.db.first(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`, [sessionId]);
        const names = SESSION_COLUMNS.split(',').map((name) => name.trim());
        return Object.fromEntries(names.map((name, i) => [name, (row?.[i] as string | null) ?? null]));
      },
    };
  });
});

/** The contract's database on PostgreSQL at `url`, migrated as a team server's start does. */
async function postgresDatabase(url: string, opened: (sql: Sql) => void): Promise<HistoryDatabase> {
  const db = await connect(url);
  opened(db);
  await migratePostgres(db, { now: () => new Date() });
  return {
    history: postgresHistory(db),
    prefix: 'pg',
    user: async (userId) => {
      await db`INSERT INTO users (id, email, name, password_hash, created_at)
        VALUES (${userId}, ${`${userId}@example.com`}, ${userId}, 'h', ${AT})`;
    },
    workspace: async (workspaceId) => {
      await db`INSERT INTO workspaces (id, name, created_at) VALUES (${workspaceId}, ${workspaceId}, ${AT})`;
    },
    session: async (s) => {
      await db`INSERT INTO sessions (id, workspace_id, author_id, title, status, model, created_at, updated_at,
          base_branch, message_count, conversation_kind, conversation_id)
        VALUES (${s.id}, ${s.workspaceId}, ${s.authorId}, 'Imported', 'active', 'unknown', ${AT}, ${AT}, 'main',
          ${s.messages ?? 0}, ${s.conversationId === undefined ? null : 'claude-code'}, ${s.conversationId ?? null})`;
    },
    sessionColumns: async (sessionId) => {
      const [row] = await db.unsafe<Record<string, string | null>[]>(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`,
        [sessionId],
      );
      return { ...row };
    },
  };
}

describe('the history repository on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  let sql: Sql | undefined;
  afterAll(async () => sql?.end());
  historyContract(() => postgresDatabase(pg.url(), (db) => (sql = db)));
});

// A team's database may sort text by a language (`initdb --locale en_US.UTF-8`, the default of
// many installs); the answers must not change with it.
describe(
  'the history repository on PostgreSQL whose database sorts text by a language (ICU en-US)',
  requireTools(postgresTool()),
  () => {
    const pg = usePostgres();
    let sql: Sql | undefined;
    afterAll(async () => sql?.end());
    historyContract(async () =>
      postgresDatabase(await linguisticDatabase(pg, 'history_en_us'), (db) => (sql = db)),
    );
  },
);
