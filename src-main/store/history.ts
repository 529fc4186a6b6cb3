import type { HistoryKind } from '../../src-shared/sessions.js';
import { importedAgent } from './imported-agent.js';
import { num, optStr, str } from './row.js';
import type { Db } from './sqljs.js';

/** An agent CLI's session folder that a workspace imports and follows. */
export interface HistorySourceRecord {
  id: string;
  workspaceId: string;
  kind: HistoryKind;
  rootDir: string;
  authorId: string;
  paused: boolean;
  sessionCount: number;
  messageCount: number;
  lastImportAt?: string;
  createdAt: string;
}

/** How far a session file was read, and what reading on from there needs. */
export interface HistoryFileRecord {
  sourceId: string;
  path: string;
  /** Null when a session Session Desk ran holds this conversation (never imported twice). */
  sessionId: string | null;
  offset: number;
  fingerprint: string;
  size: number;
  mtimeMs: number;
  parserState?: string;
}

const SOURCE_COLUMNS = `id, workspace_id, kind, root_dir, author_id, paused, session_count, message_count,
  last_import_at, created_at`;

function toSource(r: (string | number | null | Uint8Array)[]): HistorySourceRecord {
  const source: HistorySourceRecord = {
    id: str(r[0]),
    workspaceId: str(r[1]),
    kind: str(r[2]) as HistoryKind,
    rootDir: str(r[3]),
    authorId: str(r[4]),
    paused: num(r[5]) === 1,
    sessionCount: num(r[6]),
    messageCount: num(r[7]),
    createdAt: str(r[9]),
  };
  const last = optStr(r[8]);
  if (last !== undefined) source.lastImportAt = last;
  return source;
}

export function createHistoryRepository(db: Db) {
  return {
    sources(workspaceId?: string): HistorySourceRecord[] {
      const rows =
        workspaceId === undefined
          ? db.all(`SELECT ${SOURCE_COLUMNS} FROM history_sources ORDER BY created_at, id`)
          : db.all(
              `SELECT ${SOURCE_COLUMNS} FROM history_sources WHERE workspace_id = ? ORDER BY created_at, id`,
              [workspaceId],
            );
      return rows.map(toSource);
    },

    source(id: string): HistorySourceRecord | null {
      const row = db.first(`SELECT ${SOURCE_COLUMNS} FROM history_sources WHERE id = ?`, [id]);
      return row ? toSource(row) : null;
    },

    findSource(workspaceId: string, kind: HistoryKind, rootDir: string): HistorySourceRecord | null {
      const row = db.first(
        `SELECT ${SOURCE_COLUMNS} FROM history_sources WHERE workspace_id = ? AND kind = ? AND root_dir = ?`,
        [workspaceId, kind, rootDir],
      );
      return row ? toSource(row) : null;
    },

    insertSource(source: HistorySourceRecord): void {
      db.run(
        `INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, paused, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [
          source.id,
          source.workspaceId,
          source.kind,
          source.rootDir,
          source.authorId,
          source.paused ? 1 : 0,
          source.createdAt,
        ],
      );
    },

    setAuthor(id: string, authorId: string): void {
      db.run('UPDATE history_sources SET author_id = ? WHERE id = ?', [authorId, id]);
    },

    setPaused(id: string, paused: boolean): void {
      db.run('UPDATE history_sources SET paused = ? WHERE id = ?', [paused ? 1 : 0, id]);
    },

    /** Forgets a source and its files' progress; the sessions it imported stay. */
    removeSource(id: string): void {
      db.run('DELETE FROM history_files WHERE source_id = ?', [id]);
      db.run('DELETE FROM history_sources WHERE id = ?', [id]);
    },

    /** Recounts a source's sessions and messages, and notes when it was last imported. */
    noteImport(id: string, at: string): void {
      db.run(
        `UPDATE history_sources SET last_import_at = ?,
           session_count = (SELECT count(DISTINCT session_id) FROM history_files WHERE source_id = ?),
           message_count = (SELECT coalesce(sum(message_count), 0) FROM sessions
             WHERE id IN (SELECT session_id FROM history_files WHERE source_id = ?))
         WHERE id = ?`,
        [at, id, id, id],
      );
    },

    file(sourceId: string, path: string): HistoryFileRecord | null {
      const r = db.first(
        `SELECT session_id, byte_offset, fingerprint, size, mtime_ms, parser_state FROM history_files
         WHERE source_id = ? AND path = ?`,
        [sourceId, path],
      );
      if (!r) return null;
      const file: HistoryFileRecord = {
        sourceId,
        path,
        sessionId: optStr(r[0]) ?? null,
        offset: num(r[1]),
        fingerprint: str(r[2]),
        size: num(r[3]),
        mtimeMs: num(r[4]),
      };
      const state = optStr(r[5]);
      if (state !== undefined) file.parserState = state;
      return file;
    },

    putFile(file: HistoryFileRecord): void {
      db.run(
        `INSERT INTO history_files (source_id, path, session_id, byte_offset, fingerprint, size, mtime_ms, parser_state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (source_id, path) DO UPDATE SET session_id = excluded.session_id,
           byte_offset = excluded.byte_offset, fingerprint = excluded.fingerprint, size = excluded.size,
           mtime_ms = excluded.mtime_ms, parser_state = excluded.parser_state`,
        [
          file.sourceId,
          file.path,
          file.sessionId,
          file.offset,
          file.fingerprint,
          file.size,
          file.mtimeMs,
          file.parserState ?? null,
        ],
      );
    },

    /** A session holding this CLI conversation: one Session Desk ran, or an imported one. */
    sessionForConversation(
      workspaceId: string,
      conversationId: string,
    ): { id: string; imported: boolean } | null {
      const r = db.first(
        `SELECT id, source_kind FROM sessions WHERE workspace_id = ?
           AND (conversation_id = ? OR source_conversation_id = ?)
         ORDER BY source_kind IS NOT NULL LIMIT 1`,
        [workspaceId, conversationId, conversationId],
      );
      return r ? { id: str(r[0]), imported: r[1] !== null } : null;
    },

    setSessionSource(
      sessionId: string,
      source: {
        kind: HistoryKind;
        path: string;
        cwd?: string | undefined;
        conversationId?: string | undefined;
      },
    ): void {
      db.changed(sessionId);
      db.run(
        `UPDATE sessions SET source_kind = ?, source_path = ?, source_cwd = ?, source_conversation_id = ?,
           agent_kind = ?, acp_agent = ? WHERE id = ?`,
        [
          source.kind,
          source.path,
          source.cwd ?? null,
          source.conversationId ?? null,
          importedAgent(source.kind).agent,
          importedAgent(source.kind).acpAgent,
          sessionId,
        ],
      );
    },

    /** An imported session's facts from its file: times, model, title, branch, repository. */
    setSessionFacts(
      sessionId: string,
      facts: {
        createdAt?: string | undefined;
        updatedAt?: string | undefined;
        model?: string | undefined;
        title?: string | undefined;
        branch?: string | undefined;
      },
    ): void {
      db.changed(sessionId);
      db.run(
        `UPDATE sessions SET created_at = coalesce(?, created_at), updated_at = coalesce(?, updated_at),
           model = coalesce(?, model), title = coalesce(?, title), branch = coalesce(?, branch) WHERE id = ?`,
        [
          facts.createdAt ?? null,
          facts.updatedAt ?? null,
          facts.model ?? null,
          facts.title ?? null,
          facts.branch ?? null,
          sessionId,
        ],
      );
    },
  };
}
export type HistoryRepository = ReturnType<typeof createHistoryRepository>;
