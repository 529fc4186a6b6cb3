import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import type { Clock, Logger } from '../clock.js';
import { acquireLock } from '../store/lock.js';
import { installSnapshot, Store } from '../store/store.js';
import { databaseFacts, inspectDatabaseBytes, isSound, type DatabaseFacts } from './database.js';

/** The backup cannot be restored there, or is not one: nothing was written. */
export class RestoreRefusedError extends Error {}

/**
 * Checks a backup (an SQLite file made by `sessiondesk backup`) and makes it the database
 * of a new data directory: its first snapshot, with the checksum file the store expects.
 * Refuses a directory that holds anything, so it can never overwrite data. Then opens the
 * directory as a server would (migrating a backup from an older version) to prove it works.
 */
export async function restoreBackup(
  bytes: Uint8Array,
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

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const release = acquireLock(dataDir);
  try {
    await installSnapshot(dataDir, bytes, deps.clock.now().toISOString());
  } finally {
    release();
  }
  const store = await Store.open({ dataDir, clock: deps.clock, logger: deps.logger });
  try {
    return databaseFacts(store.db);
  } finally {
    await store.close({ snapshot: false });
  }
}
