import type { Message } from '../../src-shared/index.js';
import { makePreview } from '../../src-shared/text.js';
import { MessageTooLargeError } from '../store/errors.js';
import { messageText } from '../store/session-row.js';
import type { Repos } from '../store/storage.js';
import {
  FRAME_OVERHEAD_BYTES,
  frameMessages,
  MAX_MESSAGE_BYTES,
  messagePayload,
  type TranscriptExtent,
} from '../store/transcript-format.js';
import { send, sendLast, type Queryable } from './rows.js';
import { indexAppended, type MessageIndexer } from './search.js';
import { postgresSessionListing, summaries, summaryFrom } from './session-listing.js';
import { postgresSessionRuns } from './session-runs.js';

/**
 * The largest row of `transcript_chunks`: a read from a mark never fetches more before it, and
 * a search hit in a large message never decompresses more to reach its piece (PostgreSQL
 * decompresses a row from its start: 1 MiB rows made a hit in a late piece cost up to 2 ms).
 */
export const CHUNK_BYTES = 256 * 1024;

/**
 * Appends framed messages to a session's transcript: its marks, and the bytes sql.js would
 * append to the file, in rows of at most CHUNK_BYTES. The caller holds the session's row.
 */
export async function appendTranscript(
  sql: Queryable,
  sessionId: string,
  from: TranscriptExtent,
  messages: Array<{ payload: Buffer; createdAtMs: number }>,
): Promise<number> {
  const framed = frameMessages(from, messages);
  for (const mark of framed.marks) {
    await send(
      sql,
      sql`INSERT INTO transcript_marks (session_id, seq, byte_offset)
        VALUES (${sessionId}, ${mark.seq}, ${mark.offset})`,
    );
  }
  for (let at = 0; at < framed.bytes.length; at += CHUNK_BYTES) {
    await send(
      sql,
      sql`INSERT INTO transcript_chunks (session_id, start_offset, bytes)
        VALUES (${sessionId}, ${from.bytes + at}, ${framed.bytes.subarray(at, at + CHUNK_BYTES)})`,
    );
  }
  return framed.end;
}

/**
 * The sessions' repository on PostgreSQL: the same methods, answers and rules as the sql.js
 * one (`store/sessions.ts`). A transcript is kept in `transcript_chunks` (see the README); an
 * append locks its session's row, so that two server processes appending to one session take
 * turns instead of writing the same offset. With an `indexer`, an appended message goes into the
 * search index in the same transaction (store-postgres/search.ts).
 */
export function postgresSessions(sql: Queryable, indexer?: MessageIndexer): Repos['sessions'] {
  /** Keeps workspace_people current, as sql.js does (an absent time on both sides becomes ''). */
  async function notePerson(
    workspaceId: string,
    userId: string,
    change: { sessionAt?: string; promptAt?: string; activeDelta?: number },
  ): Promise<void> {
    await sendLast(
      sql,
      sql`INSERT INTO workspace_people (workspace_id, user_id, last_session_at, last_prompt_at, active_sessions)
        VALUES (${workspaceId}, ${userId}, ${change.sessionAt ?? null}, ${change.promptAt ?? null}, ${change.activeDelta ?? 0})
        ON CONFLICT (workspace_id, user_id) DO UPDATE SET
          last_session_at = greatest(coalesce(workspace_people.last_session_at, '') COLLATE "C",
            coalesce(excluded.last_session_at, '')),
          last_prompt_at = greatest(coalesce(workspace_people.last_prompt_at, '') COLLATE "C",
            coalesce(excluded.last_prompt_at, '')),
          active_sessions = workspace_people.active_sessions + excluded.active_sessions`,
    );
  }

  async function extent(sessionId: string): Promise<TranscriptExtent> {
    const [row] = await sql<Array<{ message_count: number; transcript_bytes: number }>>`
      SELECT message_count, transcript_bytes FROM sessions WHERE id = ${sessionId}`;
    return { messageCount: row?.message_count ?? 0, bytes: row?.transcript_bytes ?? 0 };
  }

  async function appendMessage(
    sessionId: string,
    workspaceId: string,
    message: Message,
    authorId: string | null,
    at: string,
    payload = messagePayload(message),
  ): Promise<number> {
    if (payload.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(payload.length);
    // Its words are cut before the session's row is locked: appends to it wait meanwhile.
    const pieces = indexer ? await indexer(payload) : null;
    const [row] = await sql<
      Array<{ message_count: number; transcript_bytes: number; search_indexed: number }>
    >`
      SELECT message_count, transcript_bytes, search_indexed FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
    const from = { messageCount: row?.message_count ?? 0, bytes: row?.transcript_bytes ?? 0 };
    const seq = from.messageCount + 1;
    const bytes = await appendTranscript(sql, sessionId, from, [{ payload, createdAtMs: Date.parse(at) }]);
    // Into the search index only when every message before it is there (search/postgres-search-index.ts).
    const indexed = pieces !== null && row?.search_indexed === from.messageCount;
    if (indexed) {
      const frameOffset = bytes - payload.length - FRAME_OVERHEAD_BYTES;
      await indexAppended(sql, sessionId, from.messageCount, frameOffset, pieces);
    }
    if (authorId !== null) {
      await send(
        sql,
        sql`INSERT INTO prompts (session_id, seq, author_id) VALUES (${sessionId}, ${seq}, ${authorId})`,
      );
      await notePerson(workspaceId, authorId, { promptAt: at });
    }
    const text = messageText(message);
    const preview = text === null ? null : makePreview(text);
    // A run's result says whether it was stopped; a person's message starts another run.
    const stopped =
      message.type === 'assistant'
        ? sql``
        : sql`, stopped = ${message.type === 'result' && message.stopped === true ? true : null}::boolean`;
    await send(
      sql,
      sql`UPDATE sessions SET message_count = ${seq}, transcript_bytes = ${bytes}, updated_at = ${at},
          first_preview = coalesce(first_preview, ${preview}::text), last_preview = coalesce(${preview}::text, last_preview)
          ${stopped} ${indexed ? sql`, search_indexed = ${seq}` : sql``}
        WHERE id = ${sessionId}`,
    );
    return seq;
  }

  return {
    async insert(session) {
      await send(
        sql,
        sql`INSERT INTO sessions (id, workspace_id, author_id, title, status, model, created_at,
            updated_at, repo_url, repository, base_branch, first_message)
          VALUES (${session.id}, ${session.workspaceId}, ${session.authorId}, ${session.title}, 'active',
            ${session.model}, ${session.createdAt}, ${session.createdAt}, ${session.repoUrl ?? null},
            ${session.repository ?? null}, ${session.baseBranch}, ${session.initialMessage ?? null})`,
      );
      await notePerson(session.workspaceId, session.authorId, {
        sessionAt: session.createdAt,
        promptAt: session.createdAt,
        activeDelta: 1,
      });
      if (session.initialMessage !== undefined) {
        const message: Message = { type: 'user', message: { content: session.initialMessage } };
        await appendMessage(session.id, session.workspaceId, message, session.authorId, session.createdAt);
      }
    },

    appendMessage,

    async update(id, changes, at, options = {}) {
      const [before] = await sql<Array<{ workspace_id: string; author_id: string; status: string }>>`
        SELECT workspace_id, author_id, status FROM sessions WHERE id = ${id} FOR UPDATE`;
      if (!before) return;
      const wasActive = before.status === 'active';
      if (changes.status !== undefined && wasActive !== (changes.status === 'active')) {
        await notePerson(before.workspace_id, before.author_id, { activeDelta: wasActive ? -1 : 1 });
      }
      // As on sql.js (store/sessions.ts): only the run's own completion keeps a stop's mark.
      const status = changes.status ?? null;
      const keepsStop =
        changes.status === undefined || (changes.status === 'completed' && !options.requested);
      await send(
        sql,
        sql`UPDATE sessions SET title = coalesce(${changes.title ?? null}::text, title),
            status = coalesce(${status}::text, status), updated_at = ${at},
            stopped = CASE WHEN ${keepsStop}::boolean THEN stopped END
          WHERE id = ${id}`,
      );
    },

    async replaceTasks(sessionId, tasks) {
      await send(sql, sql`DELETE FROM tasks WHERE session_id = ${sessionId}`);
      for (const [position, task] of tasks.entries()) {
        await send(
          sql,
          sql`INSERT INTO tasks (session_id, id, position, title, status)
          VALUES (${sessionId}, ${task.id}, ${position}, ${task.title}, ${task.status})`,
        );
      }
    },

    async updatePullRequest(sessionId, pr, at) {
      await send(
        sql,
        sql`UPDATE sessions SET pr_number = ${pr.number}, pr_url = ${pr.url}, pr_status = ${pr.status},
          pr_merged_at = CASE WHEN ${pr.status}::text = 'merged'
            THEN coalesce(${pr.mergedAt ?? null}::text, pr_merged_at, ${at}::text) END,
          updated_at = ${at}
        WHERE id = ${sessionId}`,
      );
    },

    async pullRequestMergedAt(sessionId) {
      const [row] = await sql<Array<{ pr_merged_at: string | null }>>`
        SELECT pr_merged_at FROM sessions WHERE id = ${sessionId}`;
      return row?.pr_merged_at ?? undefined;
    },

    ...postgresSessionRuns(sql),
    ...postgresSessionListing(sql),

    async setBranch(sessionId, branch, at) {
      await send(
        sql,
        sql`UPDATE sessions SET branch = ${branch}, updated_at = ${at} WHERE id = ${sessionId}`,
      );
    },

    async find(id) {
      const [row] = summaries(await sql`${summaryFrom(sql)} WHERE s.id = ${id}`.values());
      return row ?? null;
    },

    extent,

    async markAtOrBefore(sessionId, seq) {
      const [row] = await sql<Array<{ seq: number; byte_offset: number }>>`
        SELECT seq, byte_offset FROM transcript_marks WHERE session_id = ${sessionId} AND seq <= ${seq}
        ORDER BY seq DESC LIMIT 1`;
      return row ? { seq: row.seq, offset: row.byte_offset } : null;
    },

    async promptAuthors(sessionId) {
      const rows = await sql<Array<{ seq: number; author_id: string }>>`
        SELECT seq, author_id FROM prompts WHERE session_id = ${sessionId}`;
      return new Map(rows.map((r) => [r.seq, r.author_id]));
    },

    async tasks(sessionId) {
      return sql<Array<{ id: string; title: string; status: 'pending' | 'in_progress' | 'completed' }>>`
        SELECT id, title, status FROM tasks WHERE session_id = ${sessionId} ORDER BY position`.then((rows) =>
        rows.map((r) => ({ id: r.id, title: r.title, status: r.status })),
      );
    },
  };
}
