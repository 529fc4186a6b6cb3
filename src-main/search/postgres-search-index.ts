import type { Sql } from 'postgres';
import type { SearchIndexing } from '../../src-shared/search.js';
import type { Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { TranscriptDamagedError } from '../store/errors.js';
import { readMessagePage, settledRow, type TranscriptReads } from '../sessions/transcript-reads.js';
import { connect } from '../store-postgres/connect.js';
import {
  postgresSearch,
  QUERY_CANCELED,
  type IndexedPiece,
  type PieceStatistics,
  type PostgresSearch,
} from '../store-postgres/search.js';
import type { PieceStart } from './message-piece.js';
import { indexMessage, piecesQueryOf, type PiecesQuery } from './postgres-text.js';
import type { TranscriptIndex } from './search-service.js';
import { searchBusy, searchTooCostly, WAITING_MAX } from './search-reader.js';

/** Sessions the catch-up asks for at once, and messages (or bytes) it indexes per transaction. */
const BEHIND_BATCH = 20;
const CATCH_UP_MESSAGES = 200;
const CATCH_UP_BYTES = 4 * 1024 * 1024;
/**
 * Best first when at most this many pieces match: `ts_rank` reads each match's words out of
 * storage, up to some 80 µs for a piece of 32 KB of text (the desktop's bm25 reads its index,
 * and ranks up to 5,000).
 */
export const RANKED_MAX = 200;
/** Newest first from the index's list of matches up to this many; past it, walking from the newest. */
export const SORTED_MAX = 20_000;
/** A search in at least this share of the pieces (by the statistics) walks from the newest. */
export const COMMON_SHARE = 0.05;
/** The settings of the searches' connection, beside its time limit. */
export const SEARCH_SETTINGS = {
  // The planner counts a tsvector's match as cheap and prefers reading every piece on a small
  // table, which takes each one out of TOAST: tens of milliseconds where the GIN index takes a
  // fraction of one.
  enable_seqscan: 'off',
  // Each statement's plan is made once: its shape is fixed by how it is written (the index's
  // list of matches, or the walk from the newest), and planning it afresh for every search
  // cost milliseconds.
  plan_cache_mode: 'force_generic_plan',
};
/** How long the statistics of the pieces are used before they are read again. */
const STATISTICS_MS = 60_000;
/** Pieces indexed by one catch-up pass past which the statistics are counted afresh (ANALYZE). */
const ANALYZE_AFTER_PIECES = 10_000;

/**
 * The share of the pieces a search matches, as the statistics tell it: each exact word's and
 * pair's share multiplied (as if independent), each prefix's the sum of those of the common
 * words it starts; a word the statistics do not list counts as rare (nothing). Zero when the
 * statistics list none of it, which sends the search to the index.
 */
export function shareOf(query: PiecesQuery, statistics: PieceStatistics): number {
  let share = 1;
  for (const word of query.lexemes.words) share *= statistics.words.get(word) ?? 0;
  for (const pair of query.lexemes.pairs) share *= statistics.pairs.get(pair) ?? 0;
  const started = (counts: Map<string, number>, prefix: string) => {
    let sum = 0;
    for (const [lexeme, frequency] of counts) if (lexeme.startsWith(prefix)) sum += frequency;
    return Math.min(1, sum);
  };
  for (const prefix of query.prefixes.words) share *= started(statistics.words, prefix);
  for (const prefix of query.prefixes.pairs) share *= started(statistics.pairs, prefix);
  return share;
}

interface Turn {
  run: () => Promise<void>;
}

/** A session's next messages, cut into pieces, for the catch-up to write. */
interface Batch {
  sessionId: string;
  from: number;
  messages: Array<{ frameOffset: number; pieces: IndexedPiece[] }>;
  pieces: number;
}

const isPieceStart = (value: unknown): value is PieceStart => {
  const v = value as Partial<PieceStart> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.at === 'number' &&
    typeof v.until === 'number' &&
    typeof v.skip === 'number' &&
    typeof v.stack === 'string' &&
    typeof v.inString === 'boolean'
  );
};

/**
 * The search index of a team server, on PostgreSQL: `search_pieces`, per piece of each message
 * (the desktop index's pieces) its words with their positions and the pairs of words next to
 * each other, each `tsvector` under a GIN index, written in the transaction that appends the
 * message (store-postgres/search.ts). Every server process sharing the database sees a message
 * in search as soon as it is committed, and two processes appending to one session take turns
 * on its row as they do for its transcript. What was written before (and the pieces made again
 * when the index changed) is indexed by a catch-up here, in the background, in transactions
 * that hold the session's row and check how far it is indexed, so processes catching up at
 * once never index a message twice. Searches take turns within a process, as on the desktop,
 * each one statement (or two) on a connection of their own that PostgreSQL stops past the time
 * limit; how common a search is comes from the planner's statistics, read once a minute.
 */
export class PostgresSearchIndex implements TranscriptIndex {
  private readonly search_: PostgresSearch;
  /** The searches' own connection, stopping a statement past the time limit (opened at the first). */
  private searching: Promise<{ sql: Sql; search: PostgresSearch }> | null = null;
  private statistics_: { at: number; value: Promise<PieceStatistics> } | null = null;
  /** Whether this process had ANALYZE count a database that had no statistics of the pieces. */
  private analyzed = false;
  private readonly waiting: Turn[] = [];
  private running = false;
  private catchingUp: Promise<void> | null = null;
  /** Sessions whose transcript could not be read to index it, left alone until the next start. */
  private readonly unreadable = new Set<string>();
  private closed = false;

  constructor(
    private readonly options: {
      sql: Sql;
      /** The database's URL, for the searches' own connection. */
      url: string;
      source: TranscriptReads;
      logger: Logger;
      timeLimitMs: number;
    },
  ) {
    this.search_ = postgresSearch(options.sql);
  }

  readonly search: TranscriptIndex['search'] = async (query, filters, offset, limit) => {
    const pieces = piecesQueryOf(query.terms);
    if (pieces === null) return [];
    const rows = await this.inTurn(async () => {
      const [{ search }, statistics] = await Promise.all([this.searchConnection(), this.statistics()]);
      try {
        return await search.find(
          { ...pieces, ...filters },
          {
            offset,
            limit,
            rankedMax: RANKED_MAX,
            sortedMax: SORTED_MAX,
            common: shareOf(pieces, statistics) >= COMMON_SHARE,
          },
        );
      } catch (err) {
        if ((err as { code?: unknown }).code !== QUERY_CANCELED) throw err;
        this.options.logger.warn(
          `search: stopped a search that took longer than ${this.options.timeLimitMs} ms`,
        );
        throw searchTooCostly(this.options.timeLimitMs);
      }
    });
    return rows.map((row) => ({
      sessionId: row.sessionId,
      messageIndex: row.messageIndex,
      chunk: row.chunk,
      offset: row.frameOffset,
      start: isPieceStart(row.start) ? row.start : null,
      session: row.session,
      frame: row.frame,
      piece: row.piece,
    }));
  };

  /** Whether every message of the workspace's sessions is indexed; if not, catching up goes on. */
  async indexing(workspaceId: string): Promise<SearchIndexing> {
    const pendingSessions = await this.search_.pendingSessions(workspaceId);
    if (pendingSessions > 0) this.sweep();
    return { complete: pendingSessions === 0, pendingSessions };
  }

  /** Indexes, in the background, every session with messages not yet in the index. */
  sweep(): void {
    if (this.closed || this.catchingUp) return;
    this.catchingUp = this.catchUp()
      .catch((err: unknown) => {
        // The index is never the only copy: a failure here costs search results, not data.
        this.options.logger.error(`search index: ${err instanceof Error ? err.message : String(err)}`);
      })
      .finally(() => (this.catchingUp = null));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const turn of this.waiting.splice(0)) void turn.run();
    await this.catchingUp;
    const searching = await this.searching?.catch(() => null);
    await searching?.sql.end({ timeout: 5 });
  }

  /** The searches' connection: each statement stopped past the time limit. */
  private searchConnection(): Promise<{ sql: Sql; search: PostgresSearch }> {
    this.searching ??= connect(this.options.url, {
      max: 1,
      settings: {
        statement_timeout: String(Math.max(1, Math.floor(this.options.timeLimitMs))),
        ...SEARCH_SETTINGS,
      },
    }).then(
      (sql) => ({ sql, search: postgresSearch(sql) }),
      (err: unknown) => {
        this.searching = null;
        throw err;
      },
    );
    return this.searching;
  }

  /** How common each word and pair is, read again once a minute. */
  private statistics(): Promise<PieceStatistics> {
    const now = Date.now();
    if (this.statistics_ && now - this.statistics_.at < STATISTICS_MS) return this.statistics_.value;
    const value = this.search_.statistics();
    this.statistics_ = { at: now, value };
    value.then(
      (found) => {
        // None yet (a database written before autovacuum came by): counted now, once, in the
        // background; searches go to the index meanwhile, a common one more slowly.
        if (found.words.size > 0 || this.analyzed || this.closed) return;
        this.analyzed = true;
        this.search_.analyze().then(
          () => (this.statistics_ = null),
          (err: unknown) => this.options.logger.warn(`search index: ANALYZE failed: ${String(err)}`),
        );
      },
      () => (this.statistics_ = null),
    );
    return value;
  }

  /**
   * Until no session is behind. A session that made no progress in this pass (another process
   * is indexing it, or its row changed meanwhile) is left to the next pass, which the next
   * search finding the workspace incomplete starts; one whose transcript is damaged, until the
   * next start. Any other failure (the database gone) ends the pass. The next session's
   * messages are read and cut into words while the last one's pieces go into the database.
   */
  private async catchUp(): Promise<void> {
    const stalled = new Set<string>();
    const skipped = (id: string) => stalled.has(id) || this.unreadable.has(id);
    let pieces = 0;
    let writing: Promise<void> = Promise.resolve();
    const write = async (batch: Batch) => {
      if (await this.search_.catchUp(batch.sessionId, batch.from, batch.messages)) pieces += batch.pieces;
      else stalled.add(batch.sessionId);
    };
    try {
      for (;;) {
        const behind = this.closed
          ? []
          : (await this.search_.behind(BEHIND_BATCH + stalled.size + this.unreadable.size)).filter(
              (s) => !skipped(s.sessionId),
            );
        if (behind.length === 0) break;
        for (const { sessionId, indexed } of behind) {
          if (this.closed) break;
          let batch: Batch | null = null;
          try {
            batch = await this.batchOf(sessionId, indexed);
          } catch (err) {
            if (!(err instanceof TranscriptDamagedError)) throw err;
            this.unreadable.add(sessionId);
            this.options.logger.error(`search index: session ${sessionId} cannot be indexed: ${err.message}`);
            continue;
          }
          // The batch before written (a failure ends the pass), this one's write begun.
          await writing;
          if (batch === null) stalled.add(sessionId);
          else {
            writing = write(batch);
            // Awaited at the next batch, or below: marked as handled meanwhile.
            writing.catch(() => undefined);
          }
        }
        await writing;
      }
    } finally {
      await writing.catch(() => undefined);
    }
    // Many pieces new: the planner's statistics (how common each word is) counted afresh,
    // which searches go by, rather than when autovacuum gets to it.
    if (pieces >= ANALYZE_AFTER_PIECES && !this.closed) {
      await this.search_.analyze();
      this.statistics_ = null;
    }
  }

  /** The next messages of a session behind, read and cut into pieces; null when there are none. */
  private async batchOf(sessionId: string, indexed: number): Promise<Batch | null> {
    const row = await settledRow(this.options.source, sessionId);
    if (!row) return null;
    const page = await readMessagePage(this.options.source, row, indexed, CATCH_UP_MESSAGES, CATCH_UP_BYTES);
    if (page.messages.length === 0) return null;
    const messages = [];
    let pieces = 0;
    for (const [i, json] of page.messages.entries()) {
      const made = await indexMessage(json);
      pieces += made.length;
      messages.push({ frameOffset: page.offsets[i] as number, pieces: made });
    }
    return { sessionId, from: indexed, messages, pieces };
  }

  /** Runs `work` when the searches before it in this process have run; refuses past WAITING_MAX. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new AppError(503, 'unavailable', 'The server is stopping'));
    if (this.waiting.length >= WAITING_MAX) return Promise.reject(searchBusy());
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        run: async () => {
          if (this.closed) return reject(new AppError(503, 'unavailable', 'The server is stopping'));
          try {
            resolve(await work());
          } catch (err) {
            reject(err as Error);
          }
        },
      });
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.running) return;
    this.running = true;
    for (let turn = this.waiting.shift(); turn; turn = this.waiting.shift()) await turn.run();
    this.running = false;
  }
}
