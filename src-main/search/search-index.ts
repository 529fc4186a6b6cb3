import type { SessionRow } from '../store/session-row.js';
import { join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SearchIndexing } from '../../src-shared/search.js';
import type { Logger } from '../clock.js';
import type { Store } from '../store/store.js';
import { AppError } from '../errors.js';
import { createRepositories, type Repositories } from '../store/repositories.js';
import { readsOf } from '../store/sqljs-storage.js';
import { readMessagePage, settledRow, type TranscriptReads } from '../sessions/transcript-reads.js';
import { openIndexFile, SEARCH_INDEX_FILE, SESSION_STRIDE } from './index-file.js';
import { IndexWriter, type IndexOp } from './index-writer.js';
import { piecesOf, type PieceStart } from './message-piece.js';
import { MAX_CHUNKS } from './message-text.js';
import type { ParsedQuery } from './query.js';
import { SearchReader, searchPlan, type SearchFilters } from './search-reader.js';
import { handOverTurn } from '../turns.js';

const rowidOf = (sessionKey: number, messageIndex: number, chunk: number) =>
  sessionKey * SESSION_STRIDE + messageIndex * MAX_CHUNKS + chunk;

/**
 * Work done in one turn of the event loop before it yields: at most this long reading messages
 * and cutting their text into pieces, and this much text, sent to the writer as one batch.
 */
const SLICE_MS = 8;
const SLICE_CHARS = 96 * 1024;
/** Batches sent and not yet written: reading waits beyond this, so memory stays bounded. */
const BATCHES_IN_FLIGHT = 4;
/** How long the writer's transaction stays open before it commits, in milliseconds. */
const COMMIT_EVERY_MS = 250;
/** The writer ending this many times in a row, with nothing written between, ends indexing. */
const WRITER_STARTS = 3;
/** How long one search may run before it is stopped and answered 503, by default. */
export const SEARCH_TIME_LIMIT_MS = 5_000;
/** Pages of segment merging the writer does per batch (FTS5's own merging is off, see MERGING). */
const MERGE_PAGES = 12;
/** Messages read from a transcript at once while catching up. */
const READ_MESSAGES = 200;
const READ_BYTES = 4 * 1024 * 1024;

export interface SearchRow {
  sessionId: string;
  messageIndex: number;
  chunk: number;
  /** Where the message's frame starts in its transcript, so its text is read from there. */
  offset: number | null;
  /** Where the piece starts in the message's JSON bytes (large messages only). */
  start: PieceStart | null;
  /** The message's session, when the index read it with the match (a team server's does). */
  session?: SessionRow;
  /**
   * The first bytes of the transcript from `offset`, when the index read them with the match:
   * the message's whole frame if it is small, the frame's header if the piece has a `start`.
   */
  frame?: Buffer | null;
  /** The piece's bytes of the message's payload (`start.at` to `start.until`), read with the match. */
  piece?: Buffer | null;
}

interface SessionEntry {
  key: number;
  indexed: number;
}

/** A piece of the message being indexed, carried across turns of the event loop. */
interface OpenMessage {
  sessionId: string;
  key: number;
  messageIndex: number;
  pieces: string[];
  /** Where each piece starts in the message's bytes, when it is large enough to keep them. */
  starts: Array<PieceStart | null> | null;
  next: number;
}

/**
 * The full-text index of every transcript, in `DATA_DIR/search.db` (SQLite FTS5 through
 * node:sqlite). It keeps no copy of any text (a contentless table): snippets are cut from the
 * transcripts themselves, so it can always be rebuilt from them, and is when it is missing,
 * damaged or of another format. It follows the store in the background: a session named
 * by `touch` (every live event does) is brought up to date, its messages read and cut into
 * pieces here in slices of about 8 ms, and written by the index writer (index-writer.ts) on a
 * thread of its own; searches read through a connection of their own here.
 */
export class SearchIndex {
  private readonly db: DatabaseSync;
  private readonly file: string;
  /** Each session's key and how many of its messages have been sent to the writer. */
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly statements = new Map<string, StatementSync>();
  /** Sessions to bring up to date, each with the number of the latest touch. */
  private readonly dirty = new Map<string, number>();
  /**
   * Of those, sessions that were up to date when touched (a message added to a session going
   * on): brought up to date before the others, so a large backlog (a first index, a history
   * import) does not keep what is being written now out of search.
   */
  private readonly first = new Map<string, number>();
  private touches = 0;
  private readonly unsubscribe: () => void;
  private open: OpenMessage | null = null;
  private pumping: Promise<void> | null = null;
  /** Messages read from a transcript and not yet indexed. */
  private readAhead: {
    sessionId: string;
    from: number;
    messages: Buffer[];
    offsets: number[];
    next: number;
  } | null = null;
  /** Changes made since the last batch was sent. */
  private ops: IndexOp[] = [];
  private writer: IndexWriter;
  private readonly reader: SearchReader;
  /** What `indexing` said of each workspace, until the next write to the store or the index. */
  private readonly indexingByWorkspace = new Map<string, SearchIndexing>();
  /**
   * Batches carry the generation they were made in: after a failure the writer drops what it
   * had not committed, this side reads back what was, and batches of older generations are
   * skipped.
   */
  private gen = 0;
  /** Set while the writer is asked to start again; indexing waits for it. */
  private restarting: { gen: number; done: () => void; promise: Promise<void> } | null = null;
  /** Times the writer ended in a row with no batch written between. */
  private writerEnds = 0;
  /** Why searching is off, once the writer kept ending. */
  private unavailable: string | null = null;
  private closed = false;
  private nextKey = 1;
  private readonly source: TranscriptReads;
  /** The store's own repositories, read at once: the index lives beside the sql.js store. */
  private readonly repos: Repositories;

  constructor(
    private readonly options: {
      store: Store;
      logger: Logger;
      now?: () => number;
      /** How long one search may run (SEARCH_TIME_LIMIT_MS when unset). */
      searchTimeLimitMs?: number | undefined;
    },
  ) {
    this.source = readsOf(options.store);
    this.repos = createRepositories(options.store.db);
    this.file = join(options.store.dataDir, SEARCH_INDEX_FILE);
    this.db = openIndexFile(this.file, options.logger, options.now ?? Date.now);
    this.readBack();
    this.writer = this.startWriter();
    this.reader = new SearchReader({
      file: this.file,
      timeLimitMs: options.searchTimeLimitMs ?? SEARCH_TIME_LIMIT_MS,
      logger: options.logger,
    });
    // Every write names the session it changes (null: the whole database was reloaded), the
    // API's, the agents', imports' and the admin commands' alike.
    this.unsubscribe = options.store.onChange((sessionId) => {
      this.indexingByWorkspace.clear();
      if (sessionId === null) this.sweep();
      else this.touch(sessionId);
    });
  }

  /** Marks every session whose messages are not all indexed; returns how many. */
  sweep(): number {
    let behind = 0;
    for (const { id, messageCount } of this.repos.sessions.messageCounts()) {
      const entry = this.sessions.get(id);
      // An index ahead of the store (a data directory restored from an older backup): again.
      if (entry && entry.indexed > messageCount) this.forget(id, entry);
      if ((entry?.indexed ?? 0) < messageCount) {
        this.touch(id);
        behind += 1;
      }
    }
    return behind;
  }

  /**
   * Brings this session up to date soon: after the write that named it has run (a write
   * names a session before it changes it), in the background.
   */
  touch(sessionId: string): void {
    if (this.closed || this.unavailable !== null) return;
    this.touches += 1;
    // A write names its session before it runs: a session indexed up to its messages so far is
    // one going on, gaining a message now.
    const entry = this.sessions.get(sessionId);
    const upToDate =
      entry !== undefined &&
      !this.dirty.has(sessionId) &&
      entry.indexed >= this.repos.sessions.extent(sessionId).messageCount;
    (upToDate || this.first.has(sessionId) ? this.first : this.dirty).set(sessionId, this.touches);
    this.pumping ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pump())
      .finally(() => {
        this.pumping = null;
        const next = this.first.keys().next().value ?? this.dirty.keys().next().value;
        if (next !== undefined && !this.closed) this.touch(next);
      });
  }

  /**
   * Best matches first: the message pieces matching `query` in the workspace, a page of them,
   * read on the search reader's thread within its time limit.
   */
  async search(
    query: ParsedQuery,
    filters: SearchFilters,
    offset: number,
    limit: number,
  ): Promise<SearchRow[]> {
    if (this.unavailable !== null) {
      throw new AppError(503, 'unavailable', `Search is unavailable: ${this.unavailable}`);
    }
    const rows = await this.reader.run(searchPlan(query, filters, offset, limit));
    return rows.map(([rowid, sessionId, offset, start]) => {
      const within = rowid % SESSION_STRIDE;
      return {
        sessionId,
        messageIndex: Math.floor(within / MAX_CHUNKS),
        chunk: within % MAX_CHUNKS,
        offset,
        start,
      };
    });
  }

  /**
   * Whether every message the store holds of the workspace's sessions is committed to the
   * index, and how many of its sessions are not: what a search says beside its hits. Read from
   * the index file itself, so batches sent to the writer and not yet committed count as pending.
   */
  indexing(workspaceId: string): SearchIndexing {
    let known = this.indexingByWorkspace.get(workspaceId);
    if (!known) {
      const committed = new Map<string, number>();
      for (const row of this.statement('SELECT id, indexed FROM sessions WHERE workspace_id = ?').all(
        workspaceId,
      )) {
        committed.set(String(row.id), Number(row.indexed));
      }
      let pendingSessions = 0;
      for (const { id, messageCount } of this.repos.sessions.messageCounts(workspaceId)) {
        if ((committed.get(id) ?? 0) !== messageCount) pendingSessions += 1;
      }
      known = { complete: pendingSessions === 0, pendingSessions };
      this.indexingByWorkspace.set(workspaceId, known);
    }
    return known;
  }

  /** Stops indexing; resolves once the writer has committed what it was sent and ended. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.closed = true;
    this.dirty.clear();
    this.first.clear();
    this.restarting?.done();
    while (this.pumping) await this.pumping;
    await Promise.all([this.writer.close(), this.reader.close()]);
    this.statements.clear();
    this.db.close();
  }

  private startWriter(): IndexWriter {
    return new IndexWriter({
      file: this.file,
      gen: this.gen,
      stride: SESSION_STRIDE,
      commitEveryMs: COMMIT_EVERY_MS,
      mergePages: MERGE_PAGES,
      onMessage: (message) => {
        if (message.type === 'committed') this.indexingByWorkspace.clear();
        else if (message.type === 'done' && message.gen === this.gen) this.writerEnds = 0;
        else if (message.type === 'failed' && message.gen === this.gen) {
          // The index is never the only copy: a failure here costs search results, not data.
          this.options.logger.error(`search index: ${message.message}`);
          this.startOver();
        } else if (message.type === 'reset') {
          const restarting = this.restarting;
          if (restarting?.gen !== message.gen) return;
          try {
            this.readBack();
          } catch (err) {
            this.giveUp(err instanceof Error ? err.message : String(err), 'the index cannot be read');
          }
          restarting.done();
        }
      },
      onExit: (why) => this.writerEnded(why),
    });
  }

  /**
   * The writer thread ended unasked (a crash, or out of memory): what it had not committed is
   * gone with its connection, so this side reads back what was and a new writer catches up
   * with every session; after WRITER_STARTS ends in a row searching is reported unavailable.
   */
  private writerEnded(why: string): void {
    if (this.closed) return;
    this.gen += 1;
    this.forgetWork();
    this.writerEnds += 1;
    if (this.writerEnds >= WRITER_STARTS) {
      this.giveUp(`the writer stopped (${why})`, 'the index writer keeps stopping');
      return;
    }
    this.options.logger.error(`search index: the writer stopped (${why}); starting it again`);
    try {
      this.readBack();
      this.writer = this.startWriter();
    } catch (err) {
      this.giveUp(err instanceof Error ? err.message : String(err), 'the index cannot be read');
      return;
    }
    this.restarting?.done();
    this.sweep();
  }

  /** Indexing ends until the next start, and searches say why (never the server's end). */
  private giveUp(cause: string, why: string): void {
    this.unavailable = `${why}; restart the server to index again`;
    this.options.logger.error(`search index: ${cause}; ${this.unavailable}`);
    this.restarting?.done();
  }

  /** After a failed write: the writer drops its open transaction, then indexing resumes. */
  private startOver(): void {
    this.gen += 1;
    this.forgetWork();
    this.restarting?.done();
    const gen = this.gen;
    let wake = () => {};
    const promise = new Promise<void>((resolve) => (wake = resolve));
    const done = () => {
      if (this.restarting?.gen === gen) this.restarting = null;
      wake();
    };
    this.restarting = { gen, promise, done };
    this.writer.reset(gen);
  }

  private forgetWork(): void {
    this.ops = [];
    this.open = null;
    this.readAhead = null;
    this.dirty.clear();
    this.first.clear();
  }

  /** What the index holds, as committed: each session's key and its messages indexed. */
  private readBack(): void {
    this.sessions.clear();
    this.indexingByWorkspace.clear();
    for (const row of this.statement('SELECT sk, id, indexed FROM sessions').all()) {
      this.sessions.set(String(row.id), { key: Number(row.sk), indexed: Number(row.indexed) });
    }
    this.nextKey = 1;
    for (const { key } of this.sessions.values()) this.nextKey = Math.max(this.nextKey, key + 1);
  }

  /**
   * Statements are prepared once and kept: each holds memory of SQLite's own, which V8 does not
   * see, so preparing one per turn would grow the process until a collection happened to run.
   */
  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Sessions waiting to be brought up to date. */
  private pending(): number {
    return this.first.size + this.dirty.size;
  }

  private async pump(): Promise<void> {
    while (!this.closed && this.unavailable === null && (this.open || this.pending() > 0)) {
      if (this.restarting) {
        await this.restarting.promise;
        continue;
      }
      const gen = this.gen;
      try {
        if (this.open) this.insertPieces();
        else {
          const queue = this.first.size > 0 ? this.first : this.dirty;
          const [sessionId, touch] = queue.entries().next().value as [string, number];
          // Touched again meanwhile: it stays, to be read once more.
          if ((await this.catchUp(sessionId, gen)) && this.gen === gen && queue.get(sessionId) === touch) {
            queue.delete(sessionId);
            this.options.logger.debug?.('search index: session up to date', {
              sessionId,
              messages: this.sessions.get(sessionId)?.indexed ?? 0,
            });
          }
        }
        if (this.gen === gen && this.ops.length > 0) {
          const ops = this.ops;
          this.ops = [];
          await this.writer.write(gen, ops, !this.open && this.pending() === 0, BATCHES_IN_FLIGHT);
        }
      } catch (err) {
        this.options.logger.error(`search index: ${err instanceof Error ? err.message : String(err)}`);
        if (this.gen === gen) this.startOver();
      }
      await handOverTurn();
    }
  }

  /** Reads the next messages of a session and cuts them into pieces; true once it is up to date. */
  private async catchUp(sessionId: string, gen: number): Promise<boolean> {
    const row = await settledRow(this.source, sessionId);
    if (this.closed || this.gen !== gen) return true;
    if (!row) return true;
    const agent = row.agentKind === 'acp' && row.acpAgent ? `acp:${row.acpAgent}` : row.agentKind;
    const entry = this.entryFor(sessionId, row.workspaceId, agent, row.repository);
    if (entry.indexed >= row.messageCount) return true;
    // Messages read ahead are kept for the next turns: a read starts at a mark, up to 63
    // messages before the one wanted, so reading again each turn would read them many times.
    let ahead = this.readAhead;
    if (
      !ahead ||
      ahead.sessionId !== sessionId ||
      ahead.from + ahead.next !== entry.indexed ||
      ahead.next >= ahead.messages.length
    ) {
      const page = await readMessagePage(this.source, row, entry.indexed, READ_MESSAGES, READ_BYTES);
      if (this.closed || this.gen !== gen) return true;
      ahead = { sessionId, from: entry.indexed, messages: page.messages, offsets: page.offsets, next: 0 };
      this.readAhead = ahead;
    }
    const began = performance.now();
    let done = 0;
    let chars = 0;
    while (ahead.next < ahead.messages.length) {
      const i = ahead.next;
      const json = ahead.messages[i] as Buffer;
      ahead.next += 1;
      const messageIndex = entry.indexed + done;
      this.ops.push(['frame', entry.key * SESSION_STRIDE + messageIndex, ahead.offsets[i] as number]);
      const { pieces, starts } = piecesOf(json);
      if (pieces.length > 1) {
        // A long message goes in piece by piece, over several turns.
        this.open = { sessionId, key: entry.key, messageIndex, pieces, starts, next: 0 };
        break;
      }
      if (pieces[0]) this.ops.push(['insert', rowidOf(entry.key, messageIndex, 0), pieces[0]]);
      done += 1;
      chars += pieces[0]?.length ?? 0;
      if (performance.now() - began > SLICE_MS || chars >= SLICE_CHARS) break;
    }
    this.setIndexed(sessionId, entry, entry.indexed + done);
    return this.open === null && entry.indexed >= row.messageCount;
  }

  /** Sends pieces of the open long message for one slice; the message counts once whole. */
  private insertPieces(): void {
    const open = this.open as OpenMessage;
    const entry = this.sessions.get(open.sessionId);
    if (!entry) {
      this.open = null;
      return;
    }
    let chars = 0;
    while (open.next < open.pieces.length && chars < SLICE_CHARS) {
      const piece = open.pieces[open.next] as string;
      const rowid = rowidOf(open.key, open.messageIndex, open.next);
      this.ops.push(['insert', rowid, piece]);
      const start = open.starts?.[open.next];
      if (start) {
        const { at, until, skip, stack, inString } = start;
        this.ops.push(['piece', rowid, at, until, skip, stack, inString ? 1 : 0]);
      }
      chars += piece.length;
      open.next += 1;
    }
    if (open.next >= open.pieces.length) {
      this.setIndexed(open.sessionId, entry, open.messageIndex + 1);
      this.open = null;
    }
  }

  private entryFor(
    sessionId: string,
    workspaceId: string,
    agent?: string,
    repository?: string,
  ): SessionEntry {
    const known = this.sessions.get(sessionId);
    const agentName = agent ?? null;
    const repo = repository?.toLowerCase() ?? null;
    if (known) {
      this.ops.push(['facts', known.key, agentName, repo]);
      return known;
    }
    const entry = { key: this.nextKey, indexed: 0 };
    this.nextKey += 1;
    this.ops.push(['session', entry.key, sessionId, workspaceId, agentName, repo]);
    this.sessions.set(sessionId, entry);
    return entry;
  }

  private forget(sessionId: string, entry: SessionEntry): void {
    this.ops.push(['forget', entry.key]);
    this.setIndexed(sessionId, entry, 0);
  }

  private setIndexed(sessionId: string, entry: SessionEntry, indexed: number): void {
    this.ops.push(['indexed', entry.key, indexed]);
    entry.indexed = indexed;
    this.sessions.set(sessionId, entry);
  }
}
