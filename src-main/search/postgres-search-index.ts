import type { Sql } from 'postgres';
import type { SearchIndexing } from '../../src-shared/search.js';
import type { Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { TranscriptDamagedError } from '../store/errors.js';
import { readMessagePage, settledRow, type TranscriptReads } from '../sessions/transcript-reads.js';
import { postgresSearch, QUERY_CANCELED, type PostgresSearch } from '../store-postgres/search.js';
import type { PieceStart } from './message-piece.js';
import { indexMessage, tsqueryOf } from './postgres-text.js';
import type { TranscriptIndex } from './search-service.js';
import { RANKED_MATCHES_MAX, searchBusy, searchTooCostly, WAITING_MAX } from './search-reader.js';

/** Sessions the catch-up asks for at once, and messages (or bytes) it indexes per transaction. */
const BEHIND_BATCH = 20;
const CATCH_UP_MESSAGES = 200;
const CATCH_UP_BYTES = 4 * 1024 * 1024;

interface Turn {
  run: () => Promise<void>;
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
 * The search index of a team server, on PostgreSQL: `search_pieces`, a `tsvector` per piece of
 * each message (the desktop index's pieces) under a GIN index, written in the transaction that
 * appends the message (store-postgres/search.ts). Every server process sharing the database
 * sees a message in search as soon as it is committed, and two processes appending to one
 * session take turns on its row as they do for its transcript. What was written before search
 * came to PostgreSQL is indexed by a catch-up here, in the background, in transactions that
 * hold the session's row and check how far it is indexed, so processes catching up at once
 * never index a message twice. Searches take turns within a process, as on the desktop, and
 * PostgreSQL stops one past the time limit.
 */
export class PostgresSearchIndex implements TranscriptIndex {
  private readonly search_: PostgresSearch;
  private readonly waiting: Turn[] = [];
  private running = false;
  private catchingUp: Promise<void> | null = null;
  /** Sessions whose transcript could not be read to index it, left alone until the next start. */
  private readonly unreadable = new Set<string>();
  private closed = false;

  constructor(
    private readonly options: {
      sql: Sql;
      source: TranscriptReads;
      logger: Logger;
      timeLimitMs: number;
    },
  ) {
    this.search_ = postgresSearch(options.sql);
  }

  readonly search: TranscriptIndex['search'] = async (query, filters, offset, limit) => {
    const tsquery = tsqueryOf(query.terms);
    if (tsquery === null) return [];
    const rows = await this.inTurn(async () => {
      try {
        return await this.search_.find(
          { tsquery, ...filters },
          { offset, limit, rankedMax: RANKED_MATCHES_MAX, timeLimitMs: this.options.timeLimitMs },
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
  }

  /**
   * Until no session is behind. A session that made no progress in this pass (another process
   * is indexing it, or its row changed meanwhile) is left to the next pass, which the next
   * search finding the workspace incomplete starts; one whose transcript is damaged, until the
   * next start. Any other failure (the database gone) ends the pass.
   */
  private async catchUp(): Promise<void> {
    const stalled = new Set<string>();
    const skipped = (id: string) => stalled.has(id) || this.unreadable.has(id);
    while (!this.closed) {
      const behind = (await this.search_.behind(BEHIND_BATCH + stalled.size + this.unreadable.size)).filter(
        (s) => !skipped(s.sessionId),
      );
      if (behind.length === 0) return;
      for (const { sessionId, indexed } of behind) {
        if (this.closed) return;
        try {
          if (!(await this.catchUpSession(sessionId, indexed))) stalled.add(sessionId);
        } catch (err) {
          if (!(err instanceof TranscriptDamagedError)) throw err;
          this.unreadable.add(sessionId);
          this.options.logger.error(`search index: session ${sessionId} cannot be indexed: ${err.message}`);
        }
      }
    }
  }

  /** Indexes the next messages of a session behind; false when it made no progress. */
  private async catchUpSession(sessionId: string, indexed: number): Promise<boolean> {
    const row = await settledRow(this.options.source, sessionId);
    if (!row) return false;
    const page = await readMessagePage(this.options.source, row, indexed, CATCH_UP_MESSAGES, CATCH_UP_BYTES);
    if (page.messages.length === 0) return false;
    const messages = [];
    for (const [i, json] of page.messages.entries()) {
      messages.push({ frameOffset: page.offsets[i] as number, pieces: await indexMessage(json) });
    }
    return this.search_.catchUp(sessionId, indexed, messages);
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
