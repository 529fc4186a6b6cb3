import { Worker } from 'node:worker_threads';

/**
 * One change to the index, written by the index writer in the order sent:
 * - `insert`: a piece of a message's text (FTS5 tokenizes it), at its rowid;
 * - `frame`: where a message starts in its transcript;
 * - `piece`: where a piece of a large message starts in its JSON bytes (see PieceStart);
 * - `session`: a session new to the index, with the facts searches filter on;
 * - `facts`: a known session's agent and repository, when they changed;
 * - `indexed`: how many of a session's messages are in the index;
 * - `forget`: a session's pieces and frames removed (it is indexed again from the start).
 */
export type IndexOp =
  | ['insert', rowid: number, text: string]
  | ['frame', k: number, offset: number]
  | ['piece', rowid: number, at: number, until: number, skip: number, stack: string, inString: number]
  | ['session', sk: number, id: string, workspaceId: string, agent: string | null, repository: string | null]
  | ['facts', sk: number, agent: string | null, repository: string | null]
  | ['indexed', sk: number, count: number]
  | ['forget', sk: number];

type FromWriter =
  | { type: 'done'; gen: number }
  | { type: 'failed'; gen: number; message: string }
  | { type: 'reset'; gen: number }
  | { type: 'committed' };

/**
 * The writer's program, run on a worker thread of its own with its own connection to the
 * index, so that SQLite's long steps (a commit building a segment, a merge of large doclists,
 * hundreds of milliseconds on a big index) never hold the server's event loop; WAL lets the
 * server's connection read meanwhile. It is a string run with `eval` and needs only Node's
 * built-ins, so it runs the same from the TypeScript sources, the command line's bundle and
 * the desktop app's, none of which has to ship a file of its own for it.
 *
 * It writes batches in one transaction that commits every `commitEveryMs` (or when a batch
 * says it is the last for now), merging segments a bounded step per batch (FTS5's own merging
 * is off: it would merge everything in one write). A failed write is rolled back and reported;
 * batches of that generation are then skipped until the server says where to start again.
 */
const WRITER_SOURCE = `'use strict';
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const { file, gen: firstGen, stride, commitEveryMs, mergePages } = workerData;
// Background work: on Linux (where a thread has a priority of its own) the writer yields the
// CPU to the server's thread, which answers requests.
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, 10);
} catch {}
// Nothing else writes the index: a lock held for long is another program's, and the batch fails.
const db = new DatabaseSync(file, { timeout: 2000 });
// A page cache of 4 MB: the pages it misses are in the operating system's cache, and every MB
// here is the server's RSS (16 MB cost about 15 MB of peak RSS importing history, at no gain in speed).
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -4000');
const prepared = new Map();
const statement = (sql) => {
  let s = prepared.get(sql);
  if (!s) prepared.set(sql, (s = db.prepare(sql)));
  return s;
};
const ops = {
  insert: (rowid, text) => statement('INSERT OR REPLACE INTO body (rowid, text) VALUES (?, ?)').run(rowid, text),
  frame: (k, offset) => statement('INSERT OR REPLACE INTO frames (k, offset) VALUES (?, ?)').run(k, offset),
  piece: (k, at, until, skip, stack, inString) =>
    statement('INSERT OR REPLACE INTO pieces (k, at, until, skip, stack, in_string) VALUES (?, ?, ?, ?, ?, ?)')
      .run(k, at, until, skip, stack, inString),
  session: (sk, id, workspaceId, agent, repository) =>
    statement('INSERT INTO sessions (sk, id, workspace_id, agent, repository, indexed) VALUES (?, ?, ?, ?, ?, 0)')
      .run(sk, id, workspaceId, agent, repository),
  facts: (sk, agent, repository) =>
    statement('UPDATE sessions SET agent = ?, repository = ? WHERE sk = ? AND (agent IS NOT ? OR repository IS NOT ?)')
      .run(agent, repository, sk, agent, repository),
  indexed: (sk, count) => statement('UPDATE sessions SET indexed = ? WHERE sk = ?').run(count, sk),
  forget: (sk) => {
    statement('DELETE FROM body WHERE rowid >= ? AND rowid < ?').run(sk * stride, (sk + 1) * stride);
    statement('DELETE FROM frames WHERE k >= ? AND k < ?').run(sk * stride, (sk + 1) * stride);
    statement('DELETE FROM pieces WHERE k >= ? AND k < ?').run(sk * stride, (sk + 1) * stride);
  },
};
let accepting = firstGen;
let openedAt = null;
let timer = null;
const rollback = () => {
  if (timer) clearTimeout(timer);
  timer = null;
  openedAt = null;
  if (db.isTransaction) db.exec('ROLLBACK');
};
const fail = (gen, err) => {
  try { rollback(); } catch {}
  accepting = -1;
  parentPort.postMessage({ type: 'failed', gen, message: err instanceof Error ? err.message : String(err) });
};
const commit = () => {
  if (timer) clearTimeout(timer);
  timer = null;
  if (openedAt === null) return;
  openedAt = null;
  db.exec('COMMIT');
  parentPort.postMessage({ type: 'committed' });
};
parentPort.on('message', (m) => {
  if (m.type === 'batch') {
    if (m.gen === accepting) {
      try {
        if (openedAt === null) {
          db.exec('BEGIN');
          openedAt = Date.now();
        }
        statement("INSERT INTO body(body, rank) VALUES ('merge', ?)").run(mergePages);
        for (const op of m.ops) ops[op[0]](...op.slice(1));
        if (m.last || Date.now() - openedAt >= commitEveryMs) commit();
        else timer ??= setTimeout(() => { try { commit(); } catch (err) { fail(m.gen, err); } }, commitEveryMs);
      } catch (err) {
        fail(m.gen, err);
      }
    }
    parentPort.postMessage({ type: 'done', gen: m.gen });
  } else if (m.type === 'reset') {
    try { rollback(); } catch {}
    accepting = m.gen;
    parentPort.postMessage({ type: 'reset', gen: m.gen });
  } else if (m.type === 'close') {
    try { commit(); } finally {
      db.close();
      parentPort.close();
    }
  }
});
`;

/** How long closing waits for the writer to finish what it was sent before ending it. */
const CLOSE_WAIT_MS = 10_000;

export interface IndexWriterOptions {
  file: string;
  /** The generation of batches the writer starts accepting. */
  gen: number;
  stride: number;
  commitEveryMs: number;
  mergePages: number;
  /** A batch written or failed (rolled back), a commit, or where the writer starts again. */
  onMessage: (message: FromWriter) => void;
  /** The writer ended without being asked to: why, for the log. */
  onExit: (why: string) => void;
}

/** The server's side of the index writer: what it sends, and whether it is still there. */
export class IndexWriter {
  private readonly worker: Worker;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private closing = false;
  private readonly exited: Promise<void>;
  private lastError: string | null = null;

  constructor(options: IndexWriterOptions) {
    this.worker = new Worker(WRITER_SOURCE, {
      eval: true,
      name: 'search index writer',
      // It holds a few batches at a time: a small heap keeps the process's memory down.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 },
      workerData: {
        file: options.file,
        gen: options.gen,
        stride: options.stride,
        commitEveryMs: options.commitEveryMs,
        mergePages: options.mergePages,
      },
    });
    // Idle, it keeps no process alive (nor did the index before it); while it has work it does.
    this.worker.unref();
    this.worker.on('message', (message: FromWriter) => {
      if (message.type === 'done') this.settle();
      options.onMessage(message);
    });
    this.worker.on('error', (err) => {
      this.lastError = err.message;
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        this.inFlight = 0;
        for (const wake of this.waiting.splice(0)) wake();
        resolve();
        if (!this.closing) options.onExit(this.lastError ?? `it exited with code ${code}`);
      });
    });
  }

  /** Sends a batch; resolves once few enough are still waiting to be written. */
  async write(gen: number, ops: IndexOp[], last: boolean, maxInFlight: number): Promise<void> {
    if (this.closing) return;
    if (this.inFlight === 0) this.worker.ref();
    this.inFlight += 1;
    this.worker.postMessage({ type: 'batch', gen, ops, last });
    while (this.inFlight > maxInFlight) await new Promise<void>((wake) => this.waiting.push(wake));
  }

  /** Asks the writer to drop what it has not committed and to accept batches of `gen` on. */
  reset(gen: number): void {
    this.worker.postMessage({ type: 'reset', gen });
  }

  /**
   * Lets the writer commit what it was sent and end; ends it if it has not within
   * CLOSE_WAIT_MS. Resolves once the thread is gone, whatever happened to it.
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.worker.ref();
      this.worker.postMessage({ type: 'close' });
      const timer = setTimeout(() => void this.worker.terminate(), CLOSE_WAIT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }

  private settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight === 0) this.worker.unref();
    for (const wake of this.waiting.splice(0)) wake();
  }
}
