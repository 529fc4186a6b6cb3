import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import type { Logger } from '../clock.js';
import { copyFileAtomically, realFiles, writeFileAtomically, type FileLayer } from './file-layer.js';
import { DataDamagedError, describeError } from './errors.js';
import { readJournal } from './journal-reader.js';
import {
  journalName,
  recoveryPlan,
  scanNames,
  snapshotMetaName,
  snapshotName,
  type RecoveryInput,
  type SnapshotCheck,
} from './recovery-plan.js';
import { loadSqlJs, SqlJsDb, type Db } from './sqljs.js';

/**
 * A data directory's state as it is on disk: its snapshot files, and the loading of the newest
 * intact snapshot with the journals after it. The store reads it at open and again when it
 * reloads after a failed write; doctor and restore use the same layout and checks. Apart from
 * `store.ts` because none of it needs a running store.
 */

export interface LoadedState {
  database: SqlJsDb['raw'];
  generation: number;
  /** Bytes of the journals before the newest one that were replayed (left by a failed snapshot). */
  olderJournalBytes: number;
  /** Where appends continue: the newest journal, cut after its last intact record. */
  journal: { path: string; intactLength: number; exists: boolean };
}

interface SnapshotMeta {
  generation: number;
  size: number;
  crc32: number;
  createdAt: string;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Temp files of `writeFileAtomically` calls made by the store: a snapshot, its checksum
 * file, and the copy of a journal that was cut. Other programs keep files in the data
 * directory too (server.json.tmp, the desktop app's window-state.json.tmp): never theirs.
 */
const TEMP_FILE_PATTERN = /^(snapshot-\d{12}\.(db|json)|journal-\d{12}\.log\.cut-\d+)\.tmp$/u;

/** Every transcript the database counts bytes of, with that count. */
export function committedTranscripts(db: Db): Array<{ sessionId: string; bytes: number }> {
  return db
    .all('SELECT id, transcript_bytes FROM sessions WHERE transcript_bytes > 0')
    .map((r) => ({ sessionId: String(r[0]), bytes: Number(r[1]) }));
}

/**
 * Writes generation `generation`'s snapshot. Its checksum file goes first, so a snapshot on
 * disk always has the checksum it is verified by.
 */
export async function writeSnapshotFiles(
  files: FileLayer,
  dir: string,
  generation: number,
  bytes: Uint8Array,
  createdAt: string,
): Promise<void> {
  const meta: SnapshotMeta = { generation, size: bytes.length, crc32: crc32(bytes), createdAt };
  await writeFileAtomically(
    files,
    join(dir, snapshotMetaName(generation)),
    Buffer.from(JSON.stringify(meta)),
  );
  await writeFileAtomically(files, join(dir, snapshotName(generation)), bytes);
}

async function keepAside(files: FileLayer, path: string, logger: Logger, why: string): Promise<string> {
  const aside = `${path}.damaged-${Date.now()}`;
  await files.rename(path, aside);
  logger.error(`${path}: ${why}. The damaged file was kept as ${aside}.`);
  return aside;
}

async function verifySnapshot(
  files: FileLayer,
  dir: string,
  generation: number,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; why: string }> {
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(
      (await files.readFile(join(dir, snapshotMetaName(generation)))).toString('utf8'),
    ) as SnapshotMeta;
  } catch {
    return { ok: false, why: 'its checksum file is missing or unreadable' };
  }
  const bytes = await files.readFile(join(dir, snapshotName(generation)));
  if (bytes.length !== meta.size) {
    return { ok: false, why: `it has ${bytes.length} bytes, ${meta.size} were written` };
  }
  if (crc32(bytes) !== meta.crc32) return { ok: false, why: 'its checksum does not match' };
  if (bytes.length > 0 && !bytes.subarray(0, 16).equals(SQLITE_HEADER)) {
    return { ok: false, why: 'it is not an SQLite database' };
  }
  return { ok: true, bytes };
}

/**
 * Loads the newest intact snapshot and replays the journals after it, as the recovery plan
 * says (recovery-plan.ts), reading each journal in chunks. Damage is kept aside and
 * reported; a state that cannot be rebuilt is an error, never an empty database.
 */
export async function loadState(
  files: FileLayer,
  dir: string,
  logger: Logger,
  options: { cutDamagedJournals: boolean } = { cutDamagedJournals: false },
): Promise<LoadedState> {
  const names = await files.readdir(dir);
  for (const name of names.filter((n) => TEMP_FILE_PATTERN.test(n))) {
    // A crash during a snapshot leaves its temp file; the journals still hold those writes.
    await files.unlink(join(dir, name)).catch(() => undefined);
    logger.warn(`Removed the unfinished file ${join(dir, name)} left by an interrupted snapshot.`);
  }
  const SQL = await loadSqlJs();
  const input: RecoveryInput = {
    dataDir: dir,
    names,
    snapshots: new Map(),
    journals: new Map(),
    cutDamagedJournals: options.cutDamagedJournals,
  };
  let loaded: SqlJsDb['raw'] | null = null;
  let db: SqlJsDb | null = null;
  try {
    let plan = recoveryPlan(input);
    for (; plan.next !== null; plan = recoveryPlan(input)) {
      const { kind, generation } = plan.next;
      if (kind === 'snapshot') {
        input.snapshots.set(generation, await loadSnapshot(files, dir, generation, SQL, (d) => (loaded = d)));
      } else {
        const replayInto = (db ??= new SqlJsDb(loaded ?? new SQL.Database()));
        const path = join(dir, journalName(generation));
        input.journals.set(
          generation,
          await readJournal(files, path, (records) => replayInto.replayAll(records)),
        );
      }
    }

    for (const { generation, why } of plan.setAsideSnapshots) {
      await keepAside(files, join(dir, snapshotName(generation)), logger, `is damaged: ${why}`);
    }
    if (plan.refuse !== null) throw new DataDamagedError(plan.refuse);
    if (plan.cut) {
      const path = join(dir, journalName(plan.cut.generation));
      const scan = input.journals.get(plan.cut.generation);
      const aside = `${path}.cut-${Date.now()}`;
      await copyFileAtomically(files, path, aside);
      const summary =
        `${path}: ${scan?.damage?.reason} at byte ${scan?.damage?.offset}; the ${scan?.records} records ` +
        `before it were recovered, and a copy of the whole file was kept as ${aside}.`;
      if (plan.setAsideJournals.length === 0) {
        // The usual case: a crash in the middle of an append that was never acknowledged.
        logger.warn(summary);
      } else {
        logger.error(`${summary} The journals after it cannot be replayed on top of it.`);
        for (const later of plan.setAsideJournals) {
          await keepAside(files, join(dir, journalName(later)), logger, 'follows a damaged journal');
        }
      }
    }
    const database = (db ?? new SqlJsDb(loaded ?? new SQL.Database())).detach();
    db = null;
    loaded = null;
    return {
      database,
      generation: plan.append.generation,
      olderJournalBytes: plan.olderJournalBytes,
      journal: {
        path: join(dir, journalName(plan.append.generation)),
        intactLength: plan.append.intactLength,
        exists: plan.append.exists,
      },
    };
  } finally {
    if (db) (db as SqlJsDb).detach().close();
    else (loaded as SqlJsDb['raw'] | null)?.close();
  }
}

/** Checks a snapshot and, when it is intact, opens it (handing the database to `onLoaded`). */
async function loadSnapshot(
  files: FileLayer,
  dir: string,
  generation: number,
  SQL: Awaited<ReturnType<typeof loadSqlJs>>,
  onLoaded: (database: SqlJsDb['raw']) => void,
): Promise<SnapshotCheck> {
  const checked = await verifySnapshot(files, dir, generation);
  if (!checked.ok) return checked;
  try {
    const database = new SQL.Database(checked.bytes);
    database.exec('SELECT count(*) FROM sqlite_master');
    onLoaded(database);
    return { ok: true };
  } catch (err) {
    return { ok: false, why: `it cannot be opened (${describeError(err)})` };
  }
}

/**
 * The on-disk layout and its checks, read-only, for `sessiondesk doctor`: it reports what
 * `loadState` would find without changing a file.
 */
export const storeLayout = {
  snapshotName,
  snapshotMetaName,
  journalName,
  /** Generations found among the names of a data directory's files. */
  scan: scanNames,
  /** Whether a file is a temp file the store made, which the next open removes. */
  isTempFile: (name: string) => TEMP_FILE_PATTERN.test(name),
  verifySnapshot: (dir: string, generation: number, files: FileLayer = realFiles) =>
    verifySnapshot(files, dir, generation),
};

/**
 * Makes `bytes` (an SQLite database, such as a backup) the first snapshot of a data
 * directory that holds no database yet, with its checksum file: `sessiondesk restore`.
 * The caller holds the directory's lock.
 */
export async function installSnapshot(
  dataDir: string,
  bytes: Uint8Array,
  createdAt: string,
  files: FileLayer = realFiles,
): Promise<void> {
  const found = scanNames(await files.readdir(dataDir));
  if (found.snapshots.length > 0 || found.journals.length > 0) {
    throw new Error(`${dataDir} already holds a database; a snapshot is installed only into an empty one.`);
  }
  await writeSnapshotFiles(files, dataDir, 1, bytes, createdAt);
}
