import { currentVersion, MIGRATIONS } from '../store/migrations.js';
import { loadSqlJs, SqlJsDb, type Db } from '../store/sqljs.js';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** What a database holds and whether SQLite finds it sound: for backup, restore and doctor. */
export interface DatabaseFacts {
  /** `PRAGMA integrity_check`: `['ok']` when sound, else SQLite's findings (at most 20). */
  integrity: string[];
  /** Rows that break a foreign key (`PRAGMA foreign_key_check`). */
  foreignKeyViolations: number;
  schemaVersion: number;
  /** The newest schema version this app knows. */
  knownVersion: number;
  counts: { users: number; workspaces: number; sessions: number; messages: number };
}

export class NotADatabaseError extends Error {}

/** Reads only; works on the store's own database as well as on one opened from bytes. */
export function databaseFacts(db: Db): DatabaseFacts {
  const integrity = db.all('PRAGMA integrity_check(20)').map((row) => String(row[0]));
  const foreignKeyViolations = db.all('PRAGMA foreign_key_check').length;
  const tables = new Set(
    db.all("SELECT name FROM sqlite_master WHERE type = 'table'").map((row) => String(row[0])),
  );
  const count = (table: string) =>
    tables.has(table) ? Number(db.first(`SELECT count(*) FROM ${table}`)?.[0] ?? 0) : 0;
  return {
    integrity,
    foreignKeyViolations,
    schemaVersion: currentVersion(db),
    knownVersion: MIGRATIONS.at(-1)?.version ?? 0,
    counts: {
      users: count('users'),
      workspaces: count('workspaces'),
      sessions: count('sessions'),
      // Bodies live in transcript files now (or, before migration 5, in a messages table).
      messages: tables.has('messages')
        ? count('messages')
        : Number(db.first('SELECT coalesce(sum(message_count), 0) FROM sessions')?.[0] ?? 0),
    },
  };
}

export function isSound(facts: DatabaseFacts): boolean {
  return facts.integrity.length === 1 && facts.integrity[0] === 'ok' && facts.foreignKeyViolations === 0;
}

/** Opens a database file's bytes in memory (nothing is written anywhere) and reads its facts. */
export async function inspectDatabaseBytes(bytes: Uint8Array): Promise<DatabaseFacts> {
  if (bytes.length < SQLITE_HEADER.length || !Buffer.from(bytes.subarray(0, 16)).equals(SQLITE_HEADER)) {
    throw new NotADatabaseError('it is not an SQLite database');
  }
  const SQL = await loadSqlJs();
  let db: SqlJsDb;
  try {
    db = new SqlJsDb(new SQL.Database(bytes));
  } catch (err) {
    throw new NotADatabaseError(`it cannot be opened (${err instanceof Error ? err.message : String(err)})`);
  }
  try {
    return databaseFacts(db);
  } catch (err) {
    throw new NotADatabaseError(`it cannot be read (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    db.close();
  }
}

export function describeCounts(counts: DatabaseFacts['counts']): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return [
    plural(counts.workspaces, 'workspace'),
    plural(counts.users, 'user'),
    plural(counts.sessions, 'session'),
    plural(counts.messages, 'message'),
  ].join(', ');
}
