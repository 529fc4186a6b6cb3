import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Logger } from '../clock.js';
import { acquireLock } from '../store/lock.js';
import { installSnapshot } from '../store/load-state.js';
import { Store } from '../store/store.js';
import { realFiles } from '../store/file-layer.js';
import { transcriptPath, TRANSCRIPTS_DIR } from '../store/transcripts.js';
import { BackupCheckError, checkBackupStream } from './backup.js';
import { databaseFacts, inspectDatabaseBytes, isSound, type DatabaseFacts } from './database.js';
import { TarError } from './tar.js';

/** The backup cannot be restored there, or is not one: nothing was written. */
export class RestoreRefusedError extends Error {}

/**
 * Checks a backup (made by `sessiondesk backup`: a tar archive of the database and the
 * transcripts, or, from versions before transcripts lived in files, a bare SQLite file) and
 * makes it the data of a new data directory: the database as its first snapshot, with the
 * checksum file the store expects, and the transcripts beside it. Refuses a directory that
 * holds anything, so it can never overwrite data, and leaves nothing behind when the backup
 * proves unusable. Then opens the directory as a server would (migrating a backup from an
 * older version) to prove it works.
 */
export async function restoreBackup(
  inputPath: string,
  dataDir: string,
  deps: { clock: Clock; logger: Logger },
): Promise<DatabaseFacts> {
  if (existsSync(dataDir)) {
    if (!statSync(dataDir).isDirectory()) throw new RestoreRefusedError(`${dataDir} is not a directory.`);
    const names = readdirSync(dataDir);
    if (names.length > 0) {
      const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? ', …' : '');
      throw new RestoreRefusedError(
        `${dataDir} is not empty (it holds ${shown}). Restore into a new or empty directory, then ` +
          'point --data-dir or SESSIONDESK_DATA_DIR at it.',
      );
    }
  }
  const created = !existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const release = acquireLock(dataDir);
  try {
    const database = (await isSqliteFile(inputPath))
      ? await readFile(inputPath)
      : await unpackArchive(inputPath, dataDir);
    await checkDatabase(database);
    await installSnapshot(dataDir, database, deps.clock.now().toISOString());
  } catch (err) {
    release();
    // Nothing of a refused backup stays: the directory is as it was (empty, or absent).
    for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true });
    if (created) rmSync(dataDir, { recursive: true, force: true });
    if (err instanceof BackupCheckError || err instanceof TarError) {
      throw new RestoreRefusedError(`The input is not a usable backup: ${err.message}`);
    }
    throw err;
  }
  release();
  const store = await Store.open({ dataDir, clock: deps.clock, logger: deps.logger });
  try {
    return databaseFacts(store.db);
  } finally {
    await store.close({ snapshot: false });
  }
}

async function isSqliteFile(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await handle.read(head, 0, 16, 0);
    return bytesRead === 16 && head.toString('latin1') === 'SQLite format 3\0';
  } finally {
    await handle.close();
  }
}

/** Writes the archive's transcripts into the data directory; returns its database. */
async function unpackArchive(inputPath: string, dataDir: string): Promise<Buffer> {
  const dir = join(dataDir, TRANSCRIPTS_DIR);
  await realFiles.mkdir(dir);
  // Entries come one after another: a transcript is complete when the next one starts.
  const open: { handle: FileHandle | null } = { handle: null };
  const finish = async () => {
    const { handle } = open;
    if (!handle) return;
    open.handle = null;
    try {
      await realFiles.datasync(handle);
    } finally {
      await handle.close();
    }
  };
  try {
    const checked = await checkBackupStream(
      createReadStream(inputPath) as AsyncIterable<Buffer>,
      (sessionId) => {
        let position = 0;
        let opened: Promise<FileHandle> | null = null;
        return async (piece) => {
          opened ??= finish().then(async () => {
            open.handle = await realFiles.open(transcriptPath(dataDir, sessionId), 'wx');
            return open.handle;
          });
          await realFiles.write(await opened, piece, position);
          position += piece.length;
        };
      },
    );
    await finish();
    // syncDirOf takes a path inside the directory it makes durable: here, every transcript's name.
    await realFiles.syncDirOf(join(dir, 'any'));
    return checked.database;
  } finally {
    await open.handle?.close().catch(() => undefined);
  }
}

async function checkDatabase(bytes: Uint8Array): Promise<void> {
  let facts: DatabaseFacts;
  try {
    facts = await inspectDatabaseBytes(bytes);
  } catch (err) {
    throw new RestoreRefusedError(`The input is not a usable backup: ${(err as Error).message}.`);
  }
  if (!isSound(facts)) {
    throw new RestoreRefusedError(
      `The backup fails SQLite's checks (${[...facts.integrity.slice(0, 3), `${facts.foreignKeyViolations} foreign key violations`].join('; ')}); it is not restored.`,
    );
  }
  if (facts.schemaVersion === 0) {
    throw new RestoreRefusedError('The input is an SQLite database but not a Session Desk backup.');
  }
  if (facts.schemaVersion > facts.knownVersion) {
    throw new RestoreRefusedError(
      `The backup is at schema version ${facts.schemaVersion}, newer than this app knows ` +
        `(${facts.knownVersion}). Update Session Desk to restore it.`,
    );
  }
}
