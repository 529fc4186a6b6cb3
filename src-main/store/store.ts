import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Clock, Logger } from '../clock.js';
import { realFiles, type FileLayer } from './file-layer.js';
import { DataDamagedError, describeError } from './errors.js';
import { Journal } from './journal.js';
import { committedTranscripts, loadState, writeSnapshotFiles, type LoadedState } from './load-state.js';
import { journalName, scanNames, snapshotMetaName, snapshotName } from './recovery-plan.js';
import { acquireLock } from './lock.js';
import { applyMigration, pendingMigrations } from './migrations.js';
import { SqlJsDb, type ChangeListener, type Db, type RecordedWrite } from './sqljs.js';
import { Transcripts, type StagedAppend } from './transcripts.js';

export interface StoreOptions {
  dataDir: string;
  clock: Clock;
  logger: Logger;
  files?: FileLayer;
  /** Take a snapshot (and start a new journal) once the journal grows past this. */
  snapshotAfterBytes?: number;
  /** Progress of long work at open (moving an old database's messages out); stderr by default. */
  onProgress?: (text: string) => void;
  /**
   * Open a journal damaged before its end by cutting it there (a copy is kept) and setting
   * the journals after it aside, losing the writes after the damage: `sessiondesk doctor
   * --repair`. Without it such damage is a DataDamagedError and the journals are left as they are.
   */
  cutDamagedJournals?: boolean;
}

export interface SnapshotInfo {
  generation: number;
  bytes: number;
  /** How long `export()` held the event loop. */
  exportMs: number;
  totalMs: number;
}

export interface StoreStatus {
  dataDir: string;
  generation: number;
  journalBytes: number;
  recovering: boolean;
}

export { DataDamagedError };
export class StoreUnavailableError extends Error {}

/** A write on sql.js awaited something other than the store: a mistake in our own code. */
export class AwaitInsideWriteError extends Error {
  constructor() {
    super(
      'A write awaited something other than the store (a file, a timer, another request) and was rolled back: ' +
        'do that work before the write or after it.',
    );
  }
}

/** Whether a `writeAsync` still runs: its function's calls after that are refused. */
export interface OpenWrite {
  readonly open: boolean;
}

const DEFAULT_SNAPSHOT_AFTER = 64 * 1024 * 1024;
/**
 * `close({ snapshot: 'when-large' })` snapshots from this much journal on: replaying costs a
 * start about 120 ms a MiB (an import of 400 sessions leaves 5.7 MB), a snapshot of a database
 * that holds no transcripts a few tens of ms.
 */
export const SNAPSHOT_AT_CLOSE_BYTES = 256 * 1024;

/**
 * The durable database. sql.js holds it in memory; every write is journaled and fsync'd
 * before it is acknowledged; snapshots (`export()`, written atomically) bound the journal.
 *
 * On disk, generation G is `snapshot-G.db` (+ its `.json` checksum) and `journal-G.log`,
 * the writes made after that snapshot was taken. Opening loads the newest intact snapshot
 * and replays every journal from its generation on. The previous generation is kept, so a
 * damaged newest snapshot can be rebuilt from the one before it.
 */
export class Store {
  private journal!: Journal;
  private generation = 0;
  private snapshotRunning: Promise<SnapshotInfo> | null = null;
  /** Set while memory is exported: new writes wait, so the export holds only durable ones. */
  private writesPaused: Promise<void> | null = null;
  private recovering: Promise<void> | null = null;
  private unavailable: Error | null = null;
  /** Set while recovering from a journal failure: the journal is closed and must be reopened. */
  private journalClosed = false;
  private pendingJournal: LoadedState['journal'] | null = null;
  /**
   * Journals before the active one that every open must replay too: a snapshot that failed
   * (or was cut off by a crash) leaves them. They count toward the next snapshot, so one
   * long replay is not repeated at every start.
   */
  private olderJournalBytes = 0;
  private closed = false;
  private readonly files: FileLayer;
  private readonly snapshotAfterBytes: number;
  /** The transcript files, written through the journal's commits and read by the routes. */
  readonly transcripts: Transcripts;
  /** Per session, the last write in flight that staged transcript bytes for it. */
  private readonly transcriptWrites = new Map<string, Promise<unknown>>();
  /** Set while a `writeAsync` runs its function. */
  private openWrite: Promise<void> | null = null;

  private constructor(
    private readonly sqldb: SqlJsDb,
    private readonly options: StoreOptions,
    private readonly releaseLock: () => void,
  ) {
    this.files = options.files ?? realFiles;
    this.snapshotAfterBytes = options.snapshotAfterBytes ?? DEFAULT_SNAPSHOT_AFTER;
    this.transcripts = new Transcripts(this.files, options.dataDir, options.logger);
  }

  static async open(options: StoreOptions): Promise<Store> {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const release = acquireLock(options.dataDir);
    try {
      const files = options.files ?? realFiles;
      const state = await loadState(files, options.dataDir, options.logger, {
        cutDamagedJournals: options.cutDamagedJournals ?? false,
      });
      const store = new Store(new SqlJsDb(state.database), options, release);
      store.generation = state.generation;
      store.olderJournalBytes = state.olderJournalBytes;
      store.journal = await store.openJournal(state.journal);
      try {
        await store.migrate();
        await store.transcripts.reconcile(committedTranscripts(store.sqldb));
      } catch (err) {
        await store.journal.close().catch(() => undefined);
        await store.transcripts.closeAll();
        store.sqldb.close();
        throw err;
      }
      return store;
    } catch (err) {
      release();
      throw err;
    }
  }

  /** For reads. Writes through it throw: use `write`. */
  get db(): Db {
    return this.sqldb;
  }

  /**
   * Hears every `db.changed(key)` made by a write, and `null` when memory is reloaded from
   * disk (after a failed write): what caches of the data must drop. Returns the unsubscribe.
   */
  onChange(listener: ChangeListener): () => void {
    return this.sqldb.onChange(listener);
  }

  get dataDir(): string {
    return this.options.dataDir;
  }

  /**
   * What a backup holds, consistent at one instant: the database, and each transcript's
   * committed length at that instant, taken with writes held once every write in flight has
   * reached the disk, so it holds only durable writes and every byte counted is in its file.
   */
  async backupParts(): Promise<{
    database: Uint8Array;
    transcripts: Array<{ sessionId: string; bytes: number }>;
  }> {
    if (this.closed) throw new StoreUnavailableError('The store is closed.');
    if (this.recovering) await this.recovering;
    return this.whileDurable(() => ({
      database: this.sqldb.export(),
      transcripts: committedTranscripts(this.sqldb),
    }));
  }

  status(): StoreStatus {
    return {
      dataDir: this.options.dataDir,
      generation: this.generation,
      journalBytes: this.journal.size,
      recovering: this.recovering !== null,
    };
  }

  /**
   * Runs `fn` as one atomic write and resolves once it is on disk. `fn` runs synchronously
   * (no awaits inside a write), so writes never interleave.
   */
  async write<T>(fn: (db: Db) => T): Promise<T> {
    while (!this.free()) await this.readyToWrite();
    return this.persist(this.sqldb.recordWrite(() => fn(this.sqldb)));
  }

  /**
   * `write` for a function that awaits: the repositories' asynchronous faces, which on sql.js
   * settle at once. Writes still never interleave: a write waits for the one before it, and
   * readers through `afterOpenWrite` wait for it too, so none sees a write half made. A write
   * that awaits anything else (a file, a timer) would hold every other write and reader
   * meanwhile: it is refused and rolled back (`AwaitInsideWriteError`).
   */
  async writeAsync<T>(fn: (db: Db, write: OpenWrite) => Promise<T>): Promise<T> {
    while (!this.free()) await this.readyToWrite();
    let finished!: () => void;
    const opened = new Promise<void>((resolve) => (finished = resolve));
    this.openWrite = opened;
    const write = { open: true };
    let giveUp!: (err: Error) => void;
    const abandoned = new Promise<never>((_, reject) => (giveUp = reject));
    abandoned.catch(() => undefined);
    // Every await of a repository settles before the event loop turns: one that has not by
    // then is waiting on something else, perhaps on this very write.
    const guard = setImmediate(() => {
      write.open = false;
      giveUp(new AwaitInsideWriteError());
    });
    /** Ends the write's hold on writers and readers: once its function is done, before it is durable. */
    const release = () => {
      write.open = false;
      clearImmediate(guard);
      // Called twice (after the function, and at the end); by then another write may hold it.
      if (this.openWrite !== opened) return;
      this.openWrite = null;
      finished();
    };
    try {
      const recorded = await this.sqldb.recordWriteAsync(() => fn(this.sqldb, write), abandoned);
      release();
      return await this.persist(recorded);
    } finally {
      release();
    }
  }

  /** Resolves once no asynchronous write is open: readers through the repositories wait here. */
  get afterOpenWrite(): Promise<void> | null {
    return this.openWrite;
  }

  /** Whether a write may start now: checked in the same step as it starts. */
  private free(): boolean {
    if (this.closed) throw new StoreUnavailableError('The store is closed.');
    return !this.openWrite && !this.writesPaused && !this.recovering && !this.unavailable;
  }

  private async readyToWrite(): Promise<void> {
    if (this.openWrite) await this.openWrite;
    if (this.writesPaused) await this.writesPaused;
    if (this.recovering) await this.recovering;
    if (this.unavailable) await this.recover();
  }

  private async persist<T>({ result, record, staged }: RecordedWrite<T>): Promise<T> {
    if (record === null) return result;
    const appended = this.journal.append(record, staged);
    for (const { sessionId } of staged) this.trackTranscriptWrite(sessionId, appended);
    try {
      await appended;
    } catch (err) {
      // Memory still holds the refused write until it is reloaded from disk: wait for that,
      // so no read after the refusal can see it.
      await this.recovering?.catch(() => undefined);
      throw new StoreUnavailableError(`The write could not be saved to disk: ${describeError(err)}`, {
        cause: err,
      });
    }
    if (this.replayBytes() > this.snapshotAfterBytes && !this.snapshotRunning) {
      this.startSnapshot().catch((err: unknown) => {
        this.options.logger.error(`Snapshot failed: ${describeError(err)}. The journal keeps every write.`);
      });
    }
    return result;
  }

  /**
   * Runs `read` at an instant when no write that appends to this session's transcript is in
   * flight, so that every byte the database then counts as committed is in the file. `read`
   * takes what it needs of the database synchronously (the session's row, with its length);
   * the transcript is then read only up to that length, which later writes never touch.
   */
  async whenTranscriptSettled<T>(sessionId: string, read: () => T): Promise<T> {
    for (;;) {
      const pending = this.transcriptWrites.get(sessionId);
      // Checked and read in one synchronous step: no write can start in between. A write
      // whose function is still running may have counted bytes it has not yet handed over.
      if (!pending && !this.recovering && !this.openWrite) return read();
      if (this.openWrite) await this.openWrite;
      await pending;
      // A failed write is followed by a reload from disk: wait for it before reading.
      await this.recovering?.catch(() => undefined);
    }
  }

  private trackTranscriptWrite(sessionId: string, write: Promise<void>): void {
    const tracked = write.then(
      () => undefined,
      () => undefined,
    );
    this.transcriptWrites.set(sessionId, tracked);
    void tracked.then(() => {
      if (this.transcriptWrites.get(sessionId) === tracked) this.transcriptWrites.delete(sessionId);
    });
  }

  /**
   * Writes a snapshot of the current state and starts a new journal generation. If one is
   * already being written, waits for it and then takes another, so the result always
   * includes every write made before the call.
   */
  async snapshot(): Promise<SnapshotInfo> {
    while (this.snapshotRunning) await this.snapshotRunning.catch(() => undefined);
    return this.startSnapshot();
  }

  private startSnapshot(): Promise<SnapshotInfo> {
    this.snapshotRunning ??= this.takeSnapshot().finally(() => {
      this.snapshotRunning = null;
    });
    return this.snapshotRunning;
  }

  /**
   * Waits for pending writes, snapshots when the journal holds anything, and unlocks. A CLI
   * command passes `false` (a short command leaves the snapshot to the server) or
   * `'when-large'`: a command that wrote a lot (an import) snapshots once the next start
   * would replay SNAPSHOT_AT_CLOSE_BYTES or more, since replaying costs that start far more
   * than writing the snapshot costs the command.
   */
  async close(options: { snapshot?: boolean | 'when-large' } = {}): Promise<void> {
    if (this.closed) return;
    while (this.openWrite) await this.openWrite;
    if (this.recovering) await this.recovering.catch(() => undefined);
    if (this.snapshotRunning) await this.snapshotRunning.catch(() => undefined);
    await this.journal.drain();
    const wanted = options.snapshot ?? true;
    const atLeast = wanted === 'when-large' ? SNAPSHOT_AT_CLOSE_BYTES : 9;
    if (wanted !== false && this.replayBytes() >= atLeast && !this.unavailable) {
      await this.snapshot().catch((err: unknown) => {
        this.options.logger.warn(`Snapshot at close failed (${describeError(err)}); the journal is kept.`);
      });
    }
    this.closed = true;
    await this.journal.close().catch(() => undefined);
    await this.transcripts.closeAll();
    this.sqldb.close();
    this.releaseLock();
  }

  /** What the next open would replay: the active journal and any older ones still needed. */
  private replayBytes(): number {
    return this.olderJournalBytes + this.journal.size;
  }

  private openJournal(plan: LoadedState['journal']): Promise<Journal> {
    const onFailure = (err: unknown) => this.onJournalFailure(err);
    return plan.exists
      ? Journal.openForAppend(this.files, plan.path, plan.intactLength, onFailure, this.writeTranscripts)
      : Journal.create(this.files, plan.path, onFailure, this.writeTranscripts);
  }

  private readonly writeTranscripts = (staged: StagedAppend[]) => this.transcripts.writeBatch(staged);

  private async migrate(): Promise<void> {
    for (const migration of pendingMigrations(this.sqldb)) {
      // Work a migration does before its SQL, in writes of its own: it must be safe to
      // repeat, as a crash may cut it off anywhere.
      await migration.prepare?.({
        db: this.sqldb,
        write: (fn) => this.write(fn),
        progress: this.options.onProgress ?? ((text) => process.stderr.write(`${text}\n`)),
      });
      await this.write((db) => applyMigration(db, migration, this.options.clock.now().toISOString()));
      // Every new data directory applies them all: a detail, not news.
      this.options.logger.debug?.(`Applied migration ${migration.version}: ${migration.name}`);
    }
  }

  private async takeSnapshot(): Promise<SnapshotInfo> {
    if (this.recovering) await this.recovering;
    const started = performance.now();
    const next = this.generation + 1;
    const dir = this.options.dataDir;
    const newJournal = await Journal.create(
      this.files,
      join(dir, journalName(next)),
      (err) => this.onJournalFailure(err),
      this.writeTranscripts,
    );
    let swapped: { bytes: Uint8Array; exportMs: number; previous: Journal };
    try {
      // Export and swap with writes held: no write lands between them.
      swapped = await this.whileDurable(() => {
        const exportStarted = performance.now();
        const exported = this.sqldb.export();
        const exportMs = performance.now() - exportStarted;
        const previous = this.journal;
        this.journal = newJournal;
        this.generation = next;
        // Forgotten even if writing this snapshot fails below, so a failing disk does not get a
        // snapshot attempt per write; the next open counts the journals left over again.
        this.olderJournalBytes = 0;
        return { bytes: exported, exportMs, previous };
      });
    } catch (err) {
      await newJournal.close().catch(() => undefined);
      await this.files.unlink(newJournal.path).catch(() => undefined);
      throw err;
    }
    const { bytes, exportMs, previous } = swapped;
    await previous.close();

    await writeSnapshotFiles(this.files, dir, next, bytes, this.options.clock.now().toISOString());
    await this.removeOldGenerations(next);
    return { generation: next, bytes: bytes.length, exportMs, totalMs: performance.now() - started };
  }

  /**
   * Runs `fn` while memory holds exactly what is on disk: new writes wait, and the writes
   * already applied are waited for until their journal records are durable. If one of them
   * was refused, memory still holds it until it is reloaded from disk: `fn` does not run, so
   * a snapshot or backup never keeps a write that was answered with an error.
   */
  private async whileDurable<T>(fn: () => T): Promise<T> {
    while (this.writesPaused || this.openWrite) await (this.writesPaused ?? this.openWrite);
    let resume!: () => void;
    this.writesPaused = new Promise<void>((resolve) => (resume = resolve));
    try {
      await this.journal.drain();
      if (this.unavailable || this.recovering) {
        throw new StoreUnavailableError(
          'A write failed to reach the disk; memory is reloaded from it first.',
        );
      }
      return fn();
    } finally {
      this.writesPaused = null;
      resume();
    }
  }

  /** Keeps the newest snapshot and the one before it, with the journals they need. */
  private async removeOldGenerations(newest: number): Promise<void> {
    const found = scanNames(await this.files.readdir(this.options.dataDir));
    // Checksum files of snapshots that failed to be written have no snapshot to check.
    const doomed = [...found.metas]
      .filter((g) => g < newest && !found.snapshots.includes(g))
      .map(snapshotMetaName);
    const previous = found.snapshots.filter((g) => g < newest).at(-1);
    if (previous !== undefined) {
      doomed.push(
        ...found.snapshots.filter((g) => g < previous).flatMap((g) => [snapshotName(g), snapshotMetaName(g)]),
        ...found.journals.filter((g) => g < previous).map(journalName),
      );
    }
    for (const name of doomed) {
      await this.files.unlink(join(this.options.dataDir, name)).catch(() => undefined);
    }
  }

  /**
   * A journal write failed: memory may now hold writes that are not on disk. Rebuild it
   * from disk so that what readers see and what survives a crash agree again.
   */
  private onJournalFailure(err: unknown): void {
    this.options.logger.error(`Journal write failed: ${describeError(err)}. Reloading from disk.`);
    this.unavailable = err instanceof Error ? err : new Error(String(err));
    void this.recover().catch(() => undefined);
  }

  /**
   * Reloads memory from disk (reads only, so readers see durable data at once even while
   * the disk refuses writes), then reopens the journal; until that works, writes fail.
   */
  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      try {
        // A snapshot under way is left to finish (or to give up, if it would have held the
        // failed write) before its files are read or its temp file taken for a leftover.
        await this.snapshotRunning?.catch(() => undefined);
        if (!this.journalClosed) {
          this.journalClosed = true;
          await this.journal.close().catch(() => undefined);
          // Their files may end in bytes no write committed: reopening cuts them back.
          await this.transcripts.closeAll();
        }
        // Until a reload has worked, memory may hold a write the disk refused: a reload that
        // failed (the disk refusing reads too) is tried again before anything else.
        if (!this.pendingJournal) {
          const state = await loadState(this.files, this.options.dataDir, this.options.logger);
          this.sqldb.replace(state.database);
          this.generation = state.generation;
          this.olderJournalBytes = state.olderJournalBytes;
          this.pendingJournal = state.journal;
        }
        this.journal = await this.openJournal(this.pendingJournal);
        this.pendingJournal = null;
        this.journalClosed = false;
        this.unavailable = null;
        this.options.logger.info('Reloaded the database from disk; writes are accepted again.');
      } catch (err) {
        this.unavailable = err instanceof Error ? err : new Error(String(err));
        throw new StoreUnavailableError(`The data directory cannot be written: ${describeError(err)}`);
      }
    })().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }
}
