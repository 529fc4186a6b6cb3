import type { HistoryKind } from '../../src-shared/sessions.js';
import type { HistorySourceRecord } from '../store/history.js';
import { importedAgent } from '../store/imported-agent.js';
import type { Repos } from '../store/storage.js';
import { optText, text, type Queryable, type Row } from './rows.js';

function toSource(row: Row): HistorySourceRecord {
  const lastImportAt = optText(row.last_import_at);
  return {
    id: text(row.id),
    workspaceId: text(row.workspace_id),
    kind: text(row.kind) as HistoryKind,
    rootDir: text(row.root_dir),
    authorId: text(row.author_id),
    paused: row.paused === true,
    sessionCount: Number(row.session_count),
    messageCount: Number(row.message_count),
    ...(lastImportAt === undefined ? {} : { lastImportAt }),
    createdAt: text(row.created_at),
  };
}

/**
 * The history repository on PostgreSQL: the same methods, answers and rules as the sql.js one
 * (`store/history.ts`). Offsets and sizes are BIGINT, which postgres.js gives as strings: they
 * are numbers again here, as sql.js answers them. Where sql.js writes on a session it also names
 * it to the listeners of its process (`db.changed`: the response cache, the search index); no
 * such listener reads PostgreSQL yet.
 */
export function postgresHistory(sql: Queryable): Repos['history'] {
  const sources = (where: ReturnType<Queryable>) => sql<Row[]>`SELECT * FROM history_sources ${where}`;
  return {
    async sources(workspaceId) {
      const rows = await sources(
        workspaceId === undefined
          ? sql`ORDER BY created_at COLLATE "C", id COLLATE "C"`
          : sql`WHERE workspace_id = ${workspaceId} ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      );
      return rows.map(toSource);
    },

    async source(id) {
      const [row] = await sources(sql`WHERE id = ${id}`);
      return row ? toSource(row) : null;
    },

    async findSource(workspaceId, kind, rootDir) {
      const [row] = await sources(
        sql`WHERE workspace_id = ${workspaceId} AND kind = ${kind} AND root_dir = ${rootDir}`,
      );
      return row ? toSource(row) : null;
    },

    async insertSource(source) {
      await sql`INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, paused, created_at)
        VALUES (${source.id}, ${source.workspaceId}, ${source.kind}, ${source.rootDir}, ${source.authorId},
          ${source.paused}, ${source.createdAt})`;
    },

    async setAuthor(id, authorId) {
      await sql`UPDATE history_sources SET author_id = ${authorId} WHERE id = ${id}`;
    },

    async setPaused(id, paused) {
      await sql`UPDATE history_sources SET paused = ${paused} WHERE id = ${id}`;
    },

    async removeSource(id) {
      // One statement, so that on a pool as in a write no source is left without its files'
      // progress; the files' rows are gone when the source's foreign key is checked.
      await sql`WITH files AS (DELETE FROM history_files WHERE source_id = ${id})
        DELETE FROM history_sources WHERE id = ${id}`;
    },

    async noteImport(id, at) {
      await sql`UPDATE history_sources SET last_import_at = ${at},
          session_count = (SELECT count(DISTINCT session_id) FROM history_files WHERE source_id = ${id}),
          message_count = (SELECT coalesce(sum(message_count), 0) FROM sessions
            WHERE id IN (SELECT session_id FROM history_files WHERE source_id = ${id}))
        WHERE id = ${id}`;
    },

    async file(sourceId, path) {
      const [row] = await sql<Row[]>`SELECT session_id, byte_offset, fingerprint, size, mtime_ms, parser_state
        FROM history_files WHERE source_id = ${sourceId} AND path = ${path}`;
      if (!row) return null;
      const parserState = optText(row.parser_state);
      return {
        sourceId,
        path,
        sessionId: optText(row.session_id) ?? null,
        offset: Number(row.byte_offset),
        fingerprint: text(row.fingerprint),
        size: Number(row.size),
        mtimeMs: Number(row.mtime_ms),
        ...(parserState === undefined ? {} : { parserState }),
      };
    },

    async putFile(file) {
      await sql`INSERT INTO history_files (source_id, path, session_id, byte_offset, fingerprint, size, mtime_ms,
          parser_state)
        VALUES (${file.sourceId}, ${file.path}, ${file.sessionId}, ${file.offset}, ${file.fingerprint},
          ${file.size}, ${file.mtimeMs}, ${file.parserState ?? null})
        ON CONFLICT (source_id, path) DO UPDATE SET session_id = excluded.session_id,
          byte_offset = excluded.byte_offset, fingerprint = excluded.fingerprint, size = excluded.size,
          mtime_ms = excluded.mtime_ms, parser_state = excluded.parser_state`;
    },

    async sessionForConversation(workspaceId, conversationId) {
      // A session Session Desk ran comes before an imported one. sql.js leaves a tie between two
      // of the same sort to the order it scans in; here the smaller id wins.
      const [row] = await sql<Row[]>`SELECT id, source_kind FROM sessions WHERE workspace_id = ${workspaceId}
          AND (conversation_id = ${conversationId} OR source_conversation_id = ${conversationId})
        ORDER BY source_kind IS NOT NULL, id COLLATE "C" LIMIT 1`;
      return row ? { id: text(row.id), imported: row.source_kind !== null } : null;
    },

    async setSessionSource(sessionId, source) {
      const { agent, acpAgent } = importedAgent(source.kind);
      await sql`UPDATE sessions SET source_kind = ${source.kind}, source_path = ${source.path},
          source_cwd = ${source.cwd ?? null}, source_conversation_id = ${source.conversationId ?? null},
          agent_kind = ${agent}, acp_agent = ${acpAgent}
        WHERE id = ${sessionId}`;
    },

    async setSessionFacts(sessionId, facts) {
      await sql`UPDATE sessions SET created_at = coalesce(${facts.createdAt ?? null}, created_at),
          updated_at = coalesce(${facts.updatedAt ?? null}, updated_at), model = coalesce(${facts.model ?? null}, model),
          title = coalesce(${facts.title ?? null}, title), branch = coalesce(${facts.branch ?? null}, branch)
        WHERE id = ${sessionId}`;
    },
  };
}
