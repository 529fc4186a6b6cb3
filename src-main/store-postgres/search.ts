import type { PendingQuery, Row as Columns, Sql } from 'postgres';
import type { AgentFilter } from '../../src-shared/sessions.js';
import { SUMMARY_COLUMNS, toSessionRow, type SessionRow } from '../store/session-row.js';
import { filterClause } from './session-listing.js';
import { send, type Queryable } from './rows.js';

/** One piece of a message's searchable text, as `search_pieces` keeps it. */
export interface IndexedPiece {
  /** Which piece of its message, from 0. */
  chunk: number;
  /** The piece's words and their positions, as a `tsvector` literal. */
  words: string;
  /** Every pair of words next to each other in it (`first_second`), as a `tsvector` literal. */
  pairs: string;
  /** Where the piece starts in the message's JSON (large messages only), kept as JSON. */
  start: object | null;
}

/** Cuts a message (its JSON bytes, as the transcript holds them) into indexed pieces. */
export type MessageIndexer = (payload: Buffer) => Promise<IndexedPiece[]>;

/**
 * A matching piece: which message, where its frame starts, where the piece starts in it; its
 * session as it stood when the piece was found, and the transcript's bytes a hit is made of,
 * so that it needs no read of its own: from the frame's start (up to FRAME_READ_BYTES of a
 * small message, the header of a large one) and the piece's own bytes (of a large message).
 */
export interface PieceRow {
  sessionId: string;
  messageIndex: number;
  chunk: number;
  frameOffset: number;
  start: unknown;
  session: SessionRow;
  frame: Buffer | null;
  piece: Buffer | null;
}

/**
 * A small message's bytes read with its match: its whole frame. Pieces keep where they start
 * in a message of over 128 KiB (search/message-piece.ts, PIECE_READ_MIN_BYTES); one as large
 * as that, with its frame's header and end, is read whole.
 */
const FRAME_READ_BYTES = 128 * 1024 + 64;
/** A frame's header: its payload's length, checksum and time (store/transcript-format.ts). */
const FRAME_HEADER_READ_BYTES = 16;

/**
 * A search as `search_pieces` answers it: `words` on the words column, `pairs` on the pairs
 * column (null: none), `rank` the whole search on the words, which orders the best first.
 */
export interface PieceQuery {
  words: string | null;
  pairs: string | null;
  rank: string;
  workspaceId: string;
  agent?: AgentFilter | undefined;
  repository?: string | undefined;
}

/** How the matches of a search come: best first, or newest first (walking from the newest). */
export interface PieceOrder {
  offset: number;
  limit: number;
  /** Best first when at most this many pieces match, newest first past it. */
  rankedMax: number;
  /**
   * Newest first from the matches the index finds, when at most this many match; past it,
   * by walking the pieces from the newest, each checked.
   */
  sortedMax: number;
  /**
   * The search matches so many pieces (the planner's statistics say) that walking the pieces
   * from the newest finds a page sooner than the index lists every match.
   */
  common: boolean;
}

/** The SQLSTATE of a statement ended by `statement_timeout`. */
export const QUERY_CANCELED = '57014';

/** How common each word, and each pair, is among the pieces, as ANALYZE last counted. */
export interface PieceStatistics {
  words: Map<string, number>;
  pairs: Map<string, number>;
}

/** The search pieces of messages, each message's as one statement (arrays unnested). */
function piecesInsert(
  sql: Queryable,
  sessionId: string,
  messages: Array<{ index: number; frameOffset: number; pieces: IndexedPiece[] }>,
) {
  const rows = messages.flatMap((m) =>
    m.pieces.map((p) => ({ ...p, index: m.index, frameOffset: m.frameOffset })),
  );
  return sql`INSERT INTO search_pieces (session_id, message_index, chunk, frame_offset, piece_start, body, pairs)
    SELECT ${sessionId}, p.message_index, p.chunk, p.frame_offset, nullif(p.start, 'null')::jsonb, p.body::tsvector,
      p.pairs::tsvector
    FROM unnest(${rows.map((r) => r.index)}::int[], ${rows.map((r) => r.chunk)}::int[],
      ${rows.map((r) => r.frameOffset)}::bigint[], ${rows.map((r) => JSON.stringify(r.start))}::text[],
      ${rows.map((r) => r.words)}::text[], ${rows.map((r) => r.pairs)}::text[])
      AS p(message_index, chunk, frame_offset, start, body, pairs)`;
}

/**
 * Indexes the message just appended at `messageIndex`, in the append's transaction, which holds
 * the session's row and found every message before it indexed (`sessions.search_indexed`), so a
 * session's indexed messages are always a first run of them; the append raises the count.
 * Sent without waiting for its answer (`send`).
 */
export async function indexAppended(
  sql: Queryable,
  sessionId: string,
  messageIndex: number,
  frameOffset: number,
  pieces: IndexedPiece[],
): Promise<void> {
  if (pieces.length > 0)
    await send(sql, piecesInsert(sql, sessionId, [{ index: messageIndex, frameOffset, pieces }]));
}

/** A part of a statement, written into another. */
type Fragment = PendingQuery<Columns[]>;

/** The columns of a page's piece before its session's (SUMMARY_COLUMNS): read by position. */
const HIT_COLUMNS = 8;

/** The search tables on a pool: what the PostgreSQL search index reads and catches up with. */
export function postgresSearch(sql: Sql) {
  return {
    /**
     * A page of the pieces matching the query in the workspace: best first (`ts_rank` on the
     * words) when at most `rankedMax` match, else newest first. A common search (the planner's
     * statistics say) walks the pieces from the newest, checking each, and stops at the page's
     * end, which is sooner than listing every match: the index answers a word in most pieces
     * with every one of them (tens of milliseconds at 3 GB). Any other search lists its
     * matches from the index, up to `sortedMax` of them, in one statement with its page, and
     * walks only past that. The `pairs` column answers phrases; the words column the rest.
     * `sql` should stop a statement past the time limit (`statement_timeout`).
     */
    async find(query: PieceQuery, order: PieceOrder): Promise<PieceRow[]> {
      const conditions = [];
      if (query.words !== null) conditions.push(sql`p.body @@ ${query.words}::tsquery`);
      if (query.pairs !== null) conditions.push(sql`p.pairs @@ ${query.pairs}::tsquery`);
      const matches = conditions.reduce((all, c) => sql`${all} AND ${c}`);
      const columns = sql`session_id, message_index, chunk, frame_offset, piece_start`;
      const page = sql`LIMIT ${order.limit} OFFSET ${order.offset}`;
      const filters = { agent: query.agent, repository: query.repository };
      // The page's pieces, in order (ord), with their sessions and the bytes their hits are
      // made of. A frame's start is read from the one row of transcript_chunks holding it (a
      // row holds one message, or a part of a large one: a small message is whole there).
      const frameAt = (length: Fragment) =>
        sql`(SELECT substring(c.bytes FROM (page.frame_offset - c.start_offset)::int + 1 FOR (${length})::int)
          FROM transcript_chunks c WHERE c.session_id = page.session_id AND c.start_offset <= page.frame_offset
          ORDER BY c.start_offset DESC LIMIT 1)`;
      // A large message's piece, from the rows holding it: those of a large message are cut
      // at CHUNK_BYTES wherever its pieces are, so a piece may go on into the next row. A
      // piece is at most 32 Ki characters (192 KiB of JSON escapes), rows at least 256 KiB:
      // the last three rows before its end hold it (else it reads short, and is read afresh).
      const pieceFrom = sql`(page.frame_offset + ${FRAME_HEADER_READ_BYTES}::int + (page.piece_start->>'at')::bigint)`;
      const pieceEnd = sql`(page.frame_offset + ${FRAME_HEADER_READ_BYTES}::int + (page.piece_start->>'until')::bigint)`;
      const pieceAt = sql`(SELECT string_agg(substring(x.bytes FROM (greatest(${pieceFrom} - x.start_offset, 0))::int + 1
            FOR (${pieceEnd} - greatest(${pieceFrom}, x.start_offset))::int), ''::bytea ORDER BY x.start_offset)
          FROM (SELECT c.start_offset, c.bytes FROM transcript_chunks c
            WHERE c.session_id = page.session_id AND c.start_offset < ${pieceEnd}
            ORDER BY c.start_offset DESC LIMIT 3) x
          WHERE x.start_offset + length(x.bytes) > ${pieceFrom})`;
      const answer = (matched: Fragment, pieces: Fragment) =>
        sql`SELECT ${matched} AS matched, page.ord, page.message_index, page.chunk, page.frame_offset,
            page.piece_start,
            ${frameAt(
              sql`CASE WHEN page.piece_start IS NULL THEN ${FRAME_READ_BYTES}::int ELSE ${FRAME_HEADER_READ_BYTES}::int END`,
            )},
            CASE WHEN page.piece_start IS NOT NULL THEN ${pieceAt} END,
            ${sql.unsafe(SUMMARY_COLUMNS)}
          FROM (SELECT row_number() OVER () AS ord, x.* FROM (${pieces}) x) page
          JOIN sessions s ON s.id = page.session_id JOIN users u ON u.id = s.author_id
          LEFT JOIN session_origins o ON o.session_id = s.id`;
      const walk = () =>
        // Each piece's session checked where it is met, so that the pieces keep their order: a
        // join could hash the sessions and sort every match after.
        answer(
          sql`NULL::int`,
          sql`SELECT ${columns} FROM (SELECT * FROM search_pieces ORDER BY written DESC OFFSET 0) p
            WHERE ${matches} AND (SELECT ${filterClause(sql, query.workspaceId, filters)}
              FROM sessions s WHERE s.id = p.session_id)
            ORDER BY p.written DESC ${page}`,
        ).values();
      let rows: unknown[][];
      if (order.common) rows = await walk();
      else {
        // One row at least, saying how many matched (up to sortedMax + 1), so that no match
        // at all, and a page past the last, end here.
        rows = await sql`
          WITH m AS MATERIALIZED (SELECT p.session_id, p.message_index, p.chunk, p.frame_offset, p.piece_start,
              p.written, p.body FROM search_pieces p JOIN sessions s ON s.id = p.session_id
              WHERE ${matches} AND ${filterClause(sql, query.workspaceId, filters)} LIMIT ${order.sortedMax + 1}),
            counted AS (SELECT count(*)::int AS matched FROM m)
          SELECT counted.matched, found.* FROM counted LEFT JOIN (${answer(
            sql`NULL::int`,
            sql`SELECT r.* FROM counted CROSS JOIN LATERAL (
              (SELECT ${columns} FROM m WHERE counted.matched <= ${order.rankedMax}
                ORDER BY ts_rank(body, ${query.rank}::tsquery, 1) DESC, written ${page})
              UNION ALL
              (SELECT ${columns} FROM m WHERE counted.matched > ${order.rankedMax}
                AND counted.matched <= ${order.sortedMax} ORDER BY written DESC ${page})) r`,
          )}) found ON true ORDER BY found.ord`.values();
        if (Number(rows[0]?.[0] ?? 0) > order.sortedMax) rows = await walk();
        // The count's own column, before the page's.
        else rows = rows.map((r) => r.slice(1));
      }
      return rows.flatMap((r) => {
        // matched, ord, message_index, chunk, frame_offset, piece_start, the bytes at the frame's
        // start and the piece's, then the session.
        if (r[1] === null || r[1] === undefined) return [];
        const session = toSessionRow(r.slice(HIT_COLUMNS) as Parameters<typeof toSessionRow>[0]);
        return [
          {
            sessionId: session.id,
            messageIndex: Number(r[2]),
            chunk: Number(r[3]),
            frameOffset: Number(r[4]),
            start: r[5],
            frame: (r[6] as Buffer | null) ?? null,
            piece: (r[7] as Buffer | null) ?? null,
            session,
          },
        ];
      });
    },

    /**
     * The planner's statistics of the pieces: each common word's and pair's share of them (the
     * most common elements ANALYZE found, at least some 1,000 of each). Empty before the first
     * ANALYZE (autovacuum's, or the catch-up's).
     */
    async statistics(): Promise<PieceStatistics> {
      const rows = await sql<
        Array<{ column: string; elements: string[] | null; frequencies: number[] | null }>
      >`
        SELECT attname AS column, most_common_elems::text::text[] AS elements,
          most_common_elem_freqs AS frequencies
        FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'search_pieces'
          AND attname IN ('body', 'pairs')`;
      const found: PieceStatistics = { words: new Map(), pairs: new Map() };
      for (const row of rows) {
        const into = row.column === 'pairs' ? found.pairs : found.words;
        row.elements?.forEach((element, i) => into.set(element, row.frequencies?.[i] ?? 0));
      }
      return found;
    },

    /** Has ANALYZE count the pieces afresh (after a catch-up changed them much). */
    async analyze(): Promise<void> {
      await sql`ANALYZE search_pieces`;
    },

    /** The workspace's sessions with messages not in the index yet. */
    async pendingSessions(workspaceId: string): Promise<number> {
      const [row] = await sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM sessions
        WHERE workspace_id = ${workspaceId} AND search_indexed < message_count`;
      return row?.n ?? 0;
    },

    /** Some sessions with messages not in the index yet, and how many of theirs are. */
    async behind(limit: number): Promise<Array<{ sessionId: string; indexed: number }>> {
      const rows = await sql<Array<{ id: string; search_indexed: number }>>`
        SELECT id, search_indexed FROM sessions WHERE search_indexed < message_count LIMIT ${limit}`;
      return rows.map((r) => ({ sessionId: r.id, indexed: r.search_indexed }));
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
        const [row] = await tx<Array<{ search_indexed: number }>>`
          SELECT search_indexed FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
        if (row?.search_indexed !== from) return false;
        await piecesInsert(
          tx,
          sessionId,
          messages.map((m, i) => ({ index: from + i, frameOffset: m.frameOffset, pieces: m.pieces })),
        );
        await tx`UPDATE sessions SET search_indexed = ${from + messages.length} WHERE id = ${sessionId}`;
        return true;
      }) as Promise<boolean>;
    },
  };
}

export type PostgresSearch = ReturnType<typeof postgresSearch>;
