import initSqlJs, { type Database, type SqlJsStatic, type SqlValue, type Statement } from 'sql.js';
import type { StagedAppend } from './transcripts.js';
import { MAX_RECORD_BYTES } from './journal.js';

export type { SqlValue };
export type Params = SqlValue[];
export type Row = SqlValue[];
/**
 * One write as it is journaled: the statements it ran, with their parameters, in order, as
 * a JSON array of `[sql, params]`.
 */
export type RecordedStatement = [sql: string, params: Params];

/** A write as it ran: its result, its journal record (null when it changed nothing), its transcript bytes. */
export interface RecordedWrite<T> {
  result: T;
  record: Buffer | null;
  staged: StagedAppend[];
}

let sqlJs: Promise<SqlJsStatic> | undefined;

/** sql.js compiles its wasm once per process; every database shares it. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  sqlJs ??= initSqlJs();
  return sqlJs;
}

/**
 * The thin adapter every repository uses. Rows come back as arrays in the column order of
 * the query (`Statement.get`), which is several times cheaper than `getAsObject`.
 */
export interface Db {
  all(sql: string, params?: Params): Row[];
  first(sql: string, params?: Params): Row | null;
  /** Runs a statement that changes data; returns the number of rows changed. */
  run(sql: string, params?: Params): number;
  /** Runs `fn` atomically: a transaction, or a savepoint when nested. */
  transaction<T>(fn: () => T): T;
  /**
   * Says, inside a write, that what is read under `key` (a session's id) is changing, so
   * caches of it must be dropped. Writers call it; `onChange` listeners hear it.
   */
  changed(key: string): void;
  /**
   * Inside a write: bytes to append to a session's transcript at `offset`. They are made
   * durable before the write's journal record, so the write commits both or neither.
   */
  stage(append: StagedAppend): void;
}

/** Hears `changed` keys, and `null` when the whole database was swapped for another. */
export type ChangeListener = (key: string | null) => void;

export class WriteOutsideTransactionError extends Error {
  constructor() {
    super('A write ran outside Store.write(); it would not be journaled.');
  }
}

/**
 * A write that could not be journaled as it ran: a parameter that JSON does not carry back
 * unchanged, or a record larger than the journal's reader accepts. It is rolled back.
 */
export class UnjournalableWriteError extends Error {}

/** Values that come back from JSON as they went in (and are bound the same way by sql.js). */
function survivesJson(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function describeValue(value: unknown): string {
  if (value instanceof Uint8Array) return `a ${value.constructor.name} (binary values are not journaled)`;
  if (typeof value === 'bigint') return `the bigint ${value}n`;
  return String(value);
}

/**
 * One statement as the journal holds it: `[sql, params]` as JSON text. Checked before the
 * statement runs, so a write the journal could not replay as it ran is never applied.
 */
function encodeStatement(sql: string, params: Params): string {
  params.forEach((value, index) => {
    if (!survivesJson(value)) {
      throw new UnjournalableWriteError(
        `Parameter ${index + 1} of "${sql.slice(0, 200)}" is ${describeValue(value)}, which the journal ` +
          'cannot store as it is: use null, a string, or a finite number.',
      );
    }
  });
  return JSON.stringify([sql, params]);
}

/**
 * Wraps one sql.js database. It caches prepared statements by SQL text and records the
 * statements of the current write, so the store can journal exactly what ran.
 */
export class SqlJsDb implements Db {
  private statements = new Map<string, Statement>();
  private depth = 0;
  /** The statements of the current write, each encoded as the journal holds it. */
  private recording: string[] | null = null;
  /** Bytes of the journal record the current write makes so far. */
  private recordingBytes = 0;
  private staged: StagedAppend[] = [];
  private changeListeners = new Set<ChangeListener>();

  constructor(private database: Database) {
    this.applyConnectionSettings();
  }

  get raw(): Database {
    return this.database;
  }

  /** Swaps in a freshly loaded database (after recovering from a write failure). */
  replace(database: Database): void {
    this.close();
    this.database = database;
    this.applyConnectionSettings();
    for (const listener of this.changeListeners) listener(null);
  }

  changed(key: string): void {
    if (this.recording === null) throw new WriteOutsideTransactionError();
    for (const listener of this.changeListeners) listener(key);
  }

  stage(append: StagedAppend): void {
    if (this.recording === null) throw new WriteOutsideTransactionError();
    this.staged.push(append);
  }

  /** Listens for `changed` keys and database swaps; returns the function that stops it. */
  onChange(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  all(sql: string, params: Params = []): Row[] {
    const stmt = this.prepare(sql);
    try {
      stmt.bind(params);
      const rows: Row[] = [];
      while (stmt.step()) rows.push(stmt.get());
      return rows;
    } finally {
      stmt.reset();
    }
  }

  first(sql: string, params: Params = []): Row | null {
    const stmt = this.prepare(sql);
    try {
      stmt.bind(params);
      return stmt.step() ? stmt.get() : null;
    } finally {
      stmt.reset();
    }
  }

  run(sql: string, params: Params = []): number {
    if (this.recording === null) throw new WriteOutsideTransactionError();
    const encoded = encodeStatement(sql, params);
    // The brackets and commas of the array, then the statement's UTF-8 bytes.
    const bytes = this.recordingBytes + 2 + Buffer.byteLength(encoded, 'utf8');
    if (bytes > MAX_RECORD_BYTES) {
      throw new UnjournalableWriteError(
        `This write would make a journal record of more than ${MAX_RECORD_BYTES / 1024 / 1024} MiB, ` +
          'the most the journal reads back: write it in smaller parts.',
      );
    }
    this.exec(sql, params);
    this.recording.push(encoded);
    this.recordingBytes = bytes - 1;
    return this.database.getRowsModified();
  }

  transaction<T>(fn: () => T): T {
    if (this.depth === 0) throw new WriteOutsideTransactionError();
    return this.atomically(fn);
  }

  /**
   * Runs `fn` as one write and returns what it ran as a journal record (null when it ran
   * nothing). A throw rolls the write back and nothing is returned to journal.
   */
  recordWrite<T>(fn: () => T): RecordedWrite<T> {
    this.startRecording();
    try {
      return this.recorded(this.atomically(fn));
    } finally {
      this.stopRecording();
    }
  }

  /**
   * `recordWrite` for a write whose function is asynchronous. The caller runs one write at a
   * time; nothing else may write while it runs.
   */
  async recordWriteAsync<T>(
    fn: () => Promise<T>,
    /** Rejects when the write must be given up: it is rolled back without waiting for `fn`. */
    abandoned: Promise<never>,
  ): Promise<RecordedWrite<T>> {
    this.startRecording();
    try {
      this.exec('BEGIN IMMEDIATE', []);
      this.depth += 1;
      let result: T;
      try {
        result = await Promise.race([fn(), abandoned]);
      } catch (err) {
        this.depth -= 1;
        this.exec('ROLLBACK', []);
        throw err;
      }
      this.depth -= 1;
      this.exec('COMMIT', []);
      return this.recorded(result);
    } finally {
      this.stopRecording();
    }
  }

  private startRecording(): void {
    if (this.recording !== null) throw new Error('Store.write() calls cannot nest.');
    this.recording = [];
    this.recordingBytes = 0;
    this.staged = [];
  }

  /** The write just made, as its journal record holds it (null when it ran nothing). */
  private recorded<T>(result: T): RecordedWrite<T> {
    const statements = this.recording ?? [];
    return {
      result,
      record: statements.length === 0 ? null : Buffer.from(`[${statements.join(',')}]`, 'utf8'),
      staged: this.staged,
    };
  }

  private stopRecording(): void {
    this.recording = null;
    this.staged = [];
  }

  /**
   * Replays journal records (JSON arrays of statements, trusted to be what earlier writes
   * ran) inside one transaction: one commit for the whole journal rather than one per
   * record, each record in its own savepoint. Stops at the first record that cannot be
   * parsed or applied, and says how many were applied.
   */
  replayAll(records: Buffer[]): { applied: number; error?: unknown } {
    let applied = 0;
    let error: unknown;
    this.atomicallyRaw(() => {
      for (const record of records) {
        try {
          const statements = JSON.parse(record.toString('utf8')) as RecordedStatement[];
          this.atomicallyRaw(() => {
            for (const [sql, params] of statements) this.exec(sql, params);
          });
        } catch (err) {
          error = err;
          return;
        }
        applied += 1;
      }
    });
    return error === undefined ? { applied } : { applied, error };
  }

  /** Runs read-only SQL that may return several result sets (PRAGMAs, checks). */
  execRaw(sql: string): Row[] {
    return this.database.exec(sql).flatMap((r) => r.values);
  }

  export(): Uint8Array {
    return this.database.export();
  }

  close(): void {
    this.detach().close();
  }

  /** Frees this wrapper's statements and hands the database over to a new owner. */
  detach(): Database {
    for (const stmt of this.statements.values()) stmt.free();
    this.statements.clear();
    return this.database;
  }

  /**
   * The database lives in sql.js's in-memory file system and durability is our journal's job,
   * so SQLite's own rollback journal and file locking are pure overhead there: each statement
   * would otherwise check for a hot journal, and each commit create and delete one.
   * MEMORY journaling keeps ROLLBACK and savepoints working.
   */
  private applyConnectionSettings(): void {
    this.database.exec(
      'PRAGMA foreign_keys = ON; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA temp_store = MEMORY; PRAGMA synchronous = OFF',
    );
  }

  private exec(sql: string, params: Params): void {
    const stmt = this.prepare(sql);
    try {
      stmt.run(params);
    } finally {
      stmt.reset();
    }
  }

  private prepare(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.database.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private atomically<T>(fn: () => T): T {
    const mark = this.recording?.length ?? 0;
    const markBytes = this.recordingBytes;
    const stagedMark = this.staged.length;
    try {
      return this.atomicallyRaw(fn);
    } catch (err) {
      // Statements and bytes of a rolled-back savepoint must not reach the disk.
      if (this.recording) {
        this.recording.length = mark;
        this.recordingBytes = markBytes;
      }
      this.staged.length = stagedMark;
      throw err;
    }
  }

  private atomicallyRaw<T>(fn: () => T): T {
    const name = `sp${this.depth}`;
    // Prepared once and reused, like every statement: parsing them on each write cost
    // more than running them (a third of replaying a journal of small writes).
    this.exec(this.depth === 0 ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${name}`, []);
    this.depth += 1;
    try {
      const result = fn();
      this.depth -= 1;
      this.exec(this.depth === 0 ? 'COMMIT' : `RELEASE ${name}`, []);
      return result;
    } catch (err) {
      this.depth -= 1;
      if (this.depth === 0) this.exec('ROLLBACK', []);
      else {
        this.exec(`ROLLBACK TO ${name}`, []);
        this.exec(`RELEASE ${name}`, []);
      }
      throw err;
    }
  }
}
