import type { Sql } from 'postgres';
import type { AgentFilter } from '../../src-shared/sessions.js';
import { filterClause } from './session-listing.js';
import type { Queryable } from './rows.js';

/** One piece of a message's searchable text, as `search_pieces` keeps it. */
export interface IndexedPiece {
  /** Which piece of its message, from 0. */
  chunk: number;
  /** The piece's lexemes and their positions, as a `tsvector` literal. */
  vector: string;
  /** Where the piece starts in the message's JSON (large messages only), kept as JSON. */
  start: object | null;
}

/** Cuts a message (its JSON bytes, as the transcript holds them) into indexed pieces. */
export type MessageIndexer = (payload: Buffer) => Promise<IndexedPiece[]>;

/** A matching piece: which message, where its frame starts, where the piece starts in it. */
export interface PieceRow {
  sessionId: string;
  messageIndex: number;
  chunk: number;
  frameOffset: number;
  start: unknown;
}

export interface PieceQuery {
  /** A `tsquery` literal. */
  tsquery: string;
  workspaceId: string;
  agent?: AgentFilter | undefined;
  repository?: string | undefined;
}

/** The SQLSTATE of a statement ended by `statement_timeout`. */
export const QUERY_CANCELED = '57014';

async function insertPieces(
  sql: Queryable,
  sessionId: string,
  messageIndex: number,
  frameOffset: number,
  pieces: IndexedPiece[],
): Promise<void> {
  if (pieces.length === 0) return;
  await sql`INSERT INTO search_pieces (session_id, message_index, chunk, frame_offset, piece_start, body)
    SELECT ${sessionId}, ${messageIndex}, p.chunk, ${frameOffset}, nullif(p.start, 'null')::jsonb, p.body::tsvector
    FROM unnest(${pieces.map((p) => p.chunk)}::int[], ${pieces.map((p) => JSON.stringify(p.start))}::text[],
      ${pieces.map((p) => p.vector)}::text[]) AS p(chunk, start, body)`;
}

/**
 * Indexes the message just appended at `messageIndex`, in the append's transaction (which holds
 * the session's row): only when every message before it is indexed, so a session's indexed
 * messages are always a first run of them. A session behind (messages written before search
 * came to PostgreSQL, or by a storage without an indexer) is left to the catch-up indexer.
 */
export async function indexAppended(
  sql: Queryable,
  indexer: MessageIndexer,
  sessionId: string,
  messageIndex: number,
  frameOffset: number,
  payload: Buffer,
): Promise<void> {
  const counted =
    messageIndex === 0
      ? await sql`INSERT INTO search_sessions (session_id, indexed) VALUES (${sessionId}, 1)
          ON CONFLICT (session_id) DO UPDATE SET indexed = 1 WHERE search_sessions.indexed = 0 RETURNING 1`
      : await sql`UPDATE search_sessions SET indexed = ${messageIndex + 1}
          WHERE session_id = ${sessionId} AND indexed = ${messageIndex} RETURNING 1`;
  if (counted.length > 0)
    await insertPieces(sql, sessionId, messageIndex, frameOffset, await indexer(payload));
}

/** The search tables on the pool: what the PostgreSQL search index reads and catches up with. */
export function postgresSearch(sql: Sql) {
  return {
    /**
     * The pieces matching the query in the workspace, a page of them: best first (ts_rank)
     * when at most `rankedMax` match, else newest first, which needs no score of every match.
     * Runs in one read-only transaction, stopped by PostgreSQL past `timeLimitMs`.
     */
    async find(
      query: PieceQuery,
      page: { offset: number; limit: number; rankedMax: number; timeLimitMs: number },
    ): Promise<PieceRow[]> {
      return sql.begin('READ ONLY', async (tx) => {
        await tx.unsafe(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(page.timeLimitMs))}`);
        // The planner counts a tsvector's match as cheap and prefers reading every piece on a
        // small table, which takes each one out of TOAST: tens of milliseconds where the GIN
        // index takes a fraction of one.
        await tx.unsafe('SET LOCAL enable_seqscan = off');
        const q = tx`${query.tsquery}::tsquery`;
        const where = tx`p.body @@ ${q} AND ${filterClause(tx, query.workspaceId, { agent: query.agent, repository: query.repository })}`;
        const from = tx`search_pieces p JOIN sessions s ON s.id = p.session_id`;
        const columns = tx`session_id, message_index, chunk, frame_offset, piece_start`;
        type Found = Array<{
          session_id: string;
          message_index: number;
          chunk: number;
          frame_offset: number;
          piece_start: unknown;
        }>;
        // The matches are found once: ranked when there are at most rankedMax of them. One row
        // at least, with how many matched (up to rankedMax + 1), so that no match at all, and a
        // page past the last, end here: newest first walks the pieces from the newest, and
        // finding none would read every one of them.
        const ranked = await tx<Array<Partial<Found[number]> & { matched: number }>>`
          WITH m AS MATERIALIZED (SELECT p.session_id, p.message_index, p.chunk, p.frame_offset, p.piece_start,
              p.written, p.body FROM ${from} WHERE ${where} LIMIT ${page.rankedMax + 1}),
            counted AS (SELECT count(*)::int AS matched FROM m)
          SELECT counted.matched, r.* FROM counted LEFT JOIN LATERAL (
            SELECT ${columns} FROM m WHERE counted.matched <= ${page.rankedMax}
            ORDER BY ts_rank(body, ${q}, 1) DESC, written LIMIT ${page.limit} OFFSET ${page.offset}) r ON true`;
        const matched = ranked[0]?.matched ?? 0;
        let rows: Found = ranked.flatMap((r) =>
          r.session_id === undefined || r.session_id === null ? [] : [r as Found[number]],
        );
        if (matched > page.rankedMax) {
          rows = await tx<Found>`SELECT p.session_id, p.message_index, p.chunk, p.frame_offset, p.piece_start
            FROM ${from} WHERE ${where}
            ORDER BY p.written DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
        }
        return rows.map((r) => ({
          sessionId: r.session_id,
          messageIndex: r.message_index,
          chunk: r.chunk,
          frameOffset: Number(r.frame_offset),
          start: r.piece_start,
        }));
      });
    },

    /** The workspace's sessions with messages not in the index yet. */
    async pendingSessions(workspaceId: string): Promise<number> {
      const [row] = await sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM sessions s LEFT JOIN search_sessions x ON x.session_id = s.id
        WHERE s.workspace_id = ${workspaceId} AND s.message_count > coalesce(x.indexed, 0)`;
      return row?.n ?? 0;
    },

    /** Some sessions with messages not in the index yet, and how many of theirs are. */
    async behind(limit: number): Promise<Array<{ sessionId: string; indexed: number }>> {
      const rows = await sql<Array<{ id: string; indexed: number }>>`
        SELECT s.id, coalesce(x.indexed, 0) AS indexed FROM sessions s
        LEFT JOIN search_sessions x ON x.session_id = s.id
        WHERE s.message_count > coalesce(x.indexed, 0) LIMIT ${limit}`;
      return rows.map((r) => ({ sessionId: r.id, indexed: r.indexed }));
    },

    /**
     * Indexes messages read from a session's transcript, the first of them at `from`: in one
     * transaction holding the session's row (appends wait), and only if the index still holds
     * exactly `from` of its messages; false when another process (or an append) got there first.
     */
    async catchUp(
      sessionId: string,
      from: number,
      messages: Array<{ frameOffset: number; pieces: IndexedPiece[] }>,
    ): Promise<boolean> {
      return sql.begin(async (tx) => {
        await tx`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
        const [row] = await tx<Array<{ indexed: number }>>`
          SELECT indexed FROM search_sessions WHERE session_id = ${sessionId}`;
        if ((row?.indexed ?? 0) !== from) return false;
        for (const [i, message] of messages.entries()) {
          await insertPieces(tx, sessionId, from + i, message.frameOffset, message.pieces);
        }
        await tx`INSERT INTO search_sessions (session_id, indexed) VALUES (${sessionId}, ${from + messages.length})
          ON CONFLICT (session_id) DO UPDATE SET indexed = excluded.indexed`;
        return true;
      }) as Promise<boolean>;
    },
  };
}

export type PostgresSearch = ReturnType<typeof postgresSearch>;
