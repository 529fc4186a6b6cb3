import { Worker } from 'node:worker_threads';
import { repositoryFilter } from '../../src-shared/repo-url.js';
import type { Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { SESSION_STRIDE } from './index-file.js';
import type { PieceStart } from './message-piece.js';
import { MAX_CHUNKS } from './message-text.js';
import type { ParsedQuery } from './query.js';

/** Up to this many matching pieces, hits are ranked by bm25; past it, newest first. */
export const RANKED_MATCHES_MAX = 5_000;
/** A prefix's matches are estimated from its first this many terms (a lower bound past it). */
const PREFIX_TERMS_COUNTED = 200;

export interface SearchFilters {
  workspaceId: string;
  agent?: string | undefined;
  repository?: string | undefined;
}

/** What the reader runs for one search: the statements, their parameters and the term list. */
export interface SearchPlan {
  /** Each token of the query, and whether it is a prefix: the rarest bounds the matches. */
  tokens: Array<[token: string, prefix: boolean]>;
  /** Best first (bm25), for a query matching at most `rankedMax` pieces. */
  ranked: string;
  /** Newest first, for one matching more: FTS5 finds them without scoring every match. */
  newest: string;
  rankedMax: number;
  params: Array<string | number>;
}

/**
 * The statements of one search. Best first is bm25's order, which must score every match; for
 * a query matching very many pieces (common words) that is too slow, and the newest matches
 * come first instead, which FTS5 finds without visiting the rest: the reader picks one by the
 * query's rarest term.
 */
export function searchPlan(
  query: ParsedQuery,
  filters: SearchFilters,
  offset: number,
  limit: number,
): SearchPlan {
  const where = ['body MATCH ?', 's.workspace_id = ?'];
  const params: Array<string | number> = [query.match, filters.workspaceId];
  // An ACP agent's sessions are indexed as `acp:ID`: `acp` alone takes them all.
  if (filters.agent === 'acp') {
    where.push("(s.agent = 'acp' OR substr(s.agent, 1, 4) = 'acp:')");
  } else if (filters.agent) {
    where.push('s.agent = ?');
    params.push(filters.agent);
  }
  if (filters.repository) {
    const wanted = repositoryFilter(filters.repository);
    if ('owner' in wanted) {
      where.push('substr(s.repository, 1, ?) = ?');
      params.push(wanted.owner.length + 1, `${wanted.owner}/`);
    } else {
      where.push('s.repository = ?');
      params.push(wanted.repository);
    }
  }
  params.push(limit, offset);
  const select = (order: string) =>
    `SELECT body.rowid AS rowid, s.id AS id FROM body
       JOIN sessions s ON s.sk = body.rowid / ${SESSION_STRIDE}
       WHERE ${where.join(' AND ')}
       ORDER BY ${order} LIMIT ? OFFSET ?`;
  const tokens: SearchPlan['tokens'] = query.terms.flatMap((term) =>
    term.tokens.map((token, i): [string, boolean] => [
      token,
      term.kind === 'prefix' && i === term.tokens.length - 1,
    ]),
  );
  return {
    tokens,
    ranked: select('bm25(body), body.rowid'),
    newest: select('body.rowid DESC'),
    rankedMax: RANKED_MATCHES_MAX,
    params,
  };
}

/**
 * A matching piece: its rowid, its session's id, where its message starts (null: unknown) and
 * where the piece starts in the message (null: not kept, the message is small).
 */
export type ReaderRow = [rowid: number, sessionId: string, offset: number | null, start: PieceStart | null];

type FromReader = { ready: true } | { id: number; rows: ReaderRow[] } | { id: number; error: string };

/**
 * The reader's program, on a worker thread of its own with a read-only connection to the
 * index: a search is SQLite's work from start to end (a prefix reads the postings of every word
 * it starts, hundreds of milliseconds and more on a large index), which must never hold the
 * server's event loop. Like the index writer it is a string run with `eval`, needing only
 * Node's built-ins.
 */
const READER_SOURCE = `'use strict';
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const { file, stride, maxChunks, prefixTermsCounted } = workerData;
// Not lowered in priority as the writer is: a person waits for a search; its time limit, and one
// search at a time, are what bound it.
const db = new DatabaseSync(file, { readOnly: true, timeout: 2000 });
db.exec('PRAGMA cache_size = -8000');
parentPort.postMessage({ ready: true });
const prepared = new Map();
const statement = (sql) => {
  let s = prepared.get(sql);
  if (!s) prepared.set(sql, (s = db.prepare(sql)));
  return s;
};
// An upper bound of the pieces a query matches, from the index's term list (each term says in
// how many pieces it appears): the rarest term bounds the intersection.
const matchesAtMost = (tokens) => {
  const exact = statement('SELECT doc FROM body_vocab WHERE term = ?');
  const prefix = statement(
    'SELECT sum(doc) AS docs FROM (SELECT doc FROM body_vocab WHERE term >= ? AND term < ? LIMIT ' + prefixTermsCounted + ')',
  );
  let bound = Infinity;
  for (const [token, isPrefix] of tokens) {
    const docs = isPrefix ? Number(prefix.get(token, token + '\\u{10FFFF}')?.docs ?? 0) : Number(exact.get(token)?.doc ?? 0);
    bound = Math.min(bound, docs);
  }
  return bound;
};
parentPort.on('message', ({ id, plan }) => {
  try {
    const sql = matchesAtMost(plan.tokens) <= plan.rankedMax ? plan.ranked : plan.newest;
    const frame = statement('SELECT offset FROM frames WHERE k = ?');
    const piece = statement('SELECT at, until, skip, stack, in_string FROM pieces WHERE k = ?');
    const rows = statement(sql).all(...plan.params).map((row) => {
      const rowid = Number(row.rowid);
      const within = rowid % stride;
      const offset = frame.get(rowid - within + Math.floor(within / maxChunks))?.offset;
      const p = piece.get(rowid);
      const start = p === undefined ? null : {
        at: Number(p.at), until: Number(p.until), skip: Number(p.skip), stack: String(p.stack), inString: p.in_string === 1,
      };
      return [rowid, String(row.id), offset === undefined ? null : Number(offset), start];
    });
    parentPort.postMessage({ id, rows });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
`;

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** Searches waiting for the reader at most; past it a search is refused as busy. */
export const WAITING_MAX = 8;

/** The answer to a search finding WAITING_MAX searches waiting already. */
export const searchBusy = () =>
  new AppError(
    503,
    'unavailable',
    `Search is busy: ${WAITING_MAX} searches are waiting for their turn; try again in a moment`,
    undefined,
    { 'retry-after': '1' },
  );

/** The answer to a search stopped at its time limit. */
export const searchTooCostly = (limitMs: number) =>
  new AppError(
    503,
    'unavailable',
    `This search took longer than ${seconds(limitMs)} and was stopped: search for rarer words, fewer prefixes or longer ones`,
    undefined,
    { 'retry-after': '1' },
  );

export interface SearchReaderOptions {
  file: string;
  /** How long one search may run before it is stopped and answered 503. */
  timeLimitMs: number;
  logger: Logger;
}

interface Job {
  id: number;
  plan: SearchPlan;
  resolve: (rows: ReaderRow[]) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/**
 * The server's side of the search reader: one search at a time, in arrival order, each within
 * its time limit. node:sqlite cannot interrupt a statement (it has no sqlite3_interrupt), so a
 * search past its limit is answered at once and its thread ended; the thread still finishes the
 * SQLite step it is in, and no other search starts until it has, so costly searches never take
 * more than the one thread, whatever their number.
 */
export class SearchReader {
  private worker: Worker | null = null;
  private workerReady = false;
  /** A reader that was ended, finishing its last step; the next search waits for it. */
  private ending: Promise<void> | null = null;
  private running: Job | null = null;
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SearchReaderOptions) {}

  /** The rows of `plan`; rejects with a 503 when the search is too costly or has to wait too long. */
  run(plan: SearchPlan): Promise<ReaderRow[]> {
    if (this.closed) return Promise.reject(new AppError(503, 'unavailable', 'The server is stopping'));
    if (this.waiting.length >= WAITING_MAX) return Promise.reject(searchBusy());
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, plan, resolve, reject });
      this.startNext();
    });
  }

  /** Ends the reader thread; searches still waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0))
      job.reject(new AppError(503, 'unavailable', 'The server is stopping'));
    if (this.running) this.finish(this.running, new AppError(503, 'unavailable', 'The server is stopping'));
    const worker = this.worker;
    this.worker = null;
    await Promise.all([worker?.terminate(), this.ending]);
  }

  private startNext(): void {
    if (this.running || this.ending || this.closed || this.waiting.length === 0) return;
    const worker = (this.worker ??= this.startWorker());
    worker.ref();
    // Sent once the thread says it is up: its start counts in no search's time.
    if (!this.workerReady) return;
    const job = this.waiting.shift() as Job;
    this.running = job;
    job.timer = setTimeout(() => this.tooCostly(job), this.options.timeLimitMs);
    worker.postMessage({ id: job.id, plan: job.plan });
  }

  private startWorker(): Worker {
    const worker = new Worker(READER_SOURCE, {
      eval: true,
      name: 'search reader',
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
      workerData: {
        file: this.options.file,
        stride: SESSION_STRIDE,
        maxChunks: MAX_CHUNKS,
        prefixTermsCounted: PREFIX_TERMS_COUNTED,
      },
    });
    let lastError: string | null = null;
    this.workerReady = false;
    worker.on('message', (message: FromReader) => {
      if ('ready' in message) {
        this.workerReady = true;
        this.startNext();
        return;
      }
      const job = this.running;
      if (job?.id !== message.id) return;
      if ('error' in message) {
        this.options.logger.error(`search: ${message.error}`);
        this.finish(job, new AppError(503, 'unavailable', 'Search could not read its index; try again'));
      } else this.finish(job, null, message.rows);
    });
    worker.on('error', (err) => {
      lastError = err.message;
    });
    worker.once('exit', (code) => {
      // Ended here (too costly, or closing): that side already answered.
      if (this.worker !== worker) return;
      this.worker = null;
      this.options.logger.error(`search: the reader stopped (${lastError ?? `exit code ${code}`})`);
      const job = this.running ?? this.waiting.shift();
      if (job) this.finish(job, new AppError(503, 'unavailable', 'Search stopped unexpectedly; try again'));
    });
    return worker;
  }

  private tooCostly(job: Job): void {
    if (this.running !== job) return;
    const limit = seconds(this.options.timeLimitMs);
    this.options.logger.warn(`search: stopped a search that took longer than ${limit}`);
    const worker = this.worker;
    this.worker = null;
    this.ending = (worker?.terminate() ?? Promise.resolve()).then(() => {
      this.ending = null;
      this.startNext();
    });
    this.finish(job, searchTooCostly(this.options.timeLimitMs));
  }

  private finish(job: Job, error: Error | null, rows: ReaderRow[] = []): void {
    clearTimeout(job.timer);
    if (this.running === job) this.running = null;
    if (error) job.reject(error);
    else job.resolve(rows);
    // Idle, the reader keeps no process alive; while it has a search it does.
    if (!this.running && this.waiting.length === 0) this.worker?.unref();
    this.startNext();
  }
}
