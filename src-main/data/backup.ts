import { isId } from '../../src-shared/ids.js';
import type { Store } from '../store/store.js';
import { loadSqlJs, SqlJsDb } from '../store/sqljs.js';
import { TRANSCRIPTS_DIR } from '../store/transcripts.js';
import { inspectDatabaseBytes, isSound, NotADatabaseError, type DatabaseFacts } from './database.js';
import { readTar, tarEnd, tarHeader, tarPadding } from './tar.js';

/**
 * A backup is a tar archive (any `tar` lists and unpacks it): the database as one SQLite
 * file, then each session's transcript cut at its committed length:
 *
 *   sessiondesk.db
 *   transcripts/<sessionId>.transcript
 *
 * Backups made before transcripts lived in files are a bare SQLite file; restore takes both.
 */
export const BACKUP_DATABASE_NAME = 'sessiondesk.db';
const TRANSCRIPT_ENTRY = /^transcripts\/([^/]+)\.transcript$/u;

export function transcriptEntryName(sessionId: string): string {
  return `${TRANSCRIPTS_DIR}/${sessionId}.transcript`;
}

/** The session a backup entry holds the transcript of, or null when it is not one. */
export function transcriptEntrySession(name: string): string | null {
  const sessionId = TRANSCRIPT_ENTRY.exec(name)?.[1];
  return sessionId !== undefined && isId('session', sessionId) ? sessionId : null;
}

/** A running store's backup as tar bytes, piece by piece: never more than one piece in memory. */
export async function* backupChunks(store: Store): AsyncGenerator<Buffer> {
  const parts = await store.backupParts();
  const now = Date.now();
  const database = Buffer.from(parts.database.buffer, parts.database.byteOffset, parts.database.byteLength);
  yield tarHeader(BACKUP_DATABASE_NAME, database.length, now);
  yield database;
  yield tarPadding(database.length);
  for (const { sessionId, bytes } of parts.transcripts) {
    yield tarHeader(transcriptEntryName(sessionId), bytes, now);
    yield* store.transcripts.readRaw(sessionId, bytes);
    yield tarPadding(bytes);
  }
  yield tarEnd();
}

export class BackupCheckError extends Error {}

/** What a backup holds, once it has been read through and checked. */
export interface CheckedBackup {
  facts: DatabaseFacts;
  database: Buffer;
  transcripts: number;
  transcriptBytes: number;
}

/**
 * Reads a backup archive through (as it is written, or from a file) and checks it: a sound
 * database, and for every transcript the database counts, an entry of exactly that length.
 * `onTranscript` receives each transcript's bytes (restore writes them out).
 */
export async function checkBackupStream(
  input: AsyncIterable<Buffer>,
  onTranscript?: (sessionId: string, size: number) => (piece: Buffer) => Promise<void> | void,
): Promise<CheckedBackup> {
  const database: Buffer[] = [];
  const sizes = new Map<string, number>();
  await readTar(input, {
    file(name, size) {
      if (name === BACKUP_DATABASE_NAME) return (piece) => void database.push(piece);
      const sessionId = transcriptEntrySession(name);
      if (sessionId === null) throw new BackupCheckError(`The backup holds an unexpected entry: ${name}`);
      sizes.set(sessionId, size);
      return onTranscript?.(sessionId, size) ?? (() => undefined);
    },
  });
  const bytes = Buffer.concat(database);
  let facts: DatabaseFacts;
  try {
    facts = await inspectDatabaseBytes(bytes);
  } catch (err) {
    if (err instanceof NotADatabaseError) throw new BackupCheckError(`Its database ${err.message}.`);
    throw err;
  }
  if (!isSound(facts)) {
    throw new BackupCheckError(
      `Its database fails SQLite's checks (${facts.integrity.slice(0, 3).join('; ')}).`,
    );
  }
  const committed = await committedLengths(bytes);
  for (const [sessionId, length] of committed) {
    const size = sizes.get(sessionId);
    if (size !== length) {
      throw new BackupCheckError(
        `The transcript of session ${sessionId} is ${size === undefined ? 'missing' : `${size} bytes`}; ` +
          `its database counts ${length}.`,
      );
    }
  }
  return {
    facts,
    database: bytes,
    transcripts: committed.size,
    transcriptBytes: [...committed.values()].reduce((n, b) => n + b, 0),
  };
}

/** Each session's committed transcript length in a database file (none before version 4). */
async function committedLengths(bytes: Buffer): Promise<Map<string, number>> {
  const SQL = await loadSqlJs();
  const db = new SqlJsDb(new SQL.Database(bytes));
  try {
    const hasColumn = db
      .all("SELECT name FROM pragma_table_info('sessions')")
      .some((r) => r[0] === 'transcript_bytes');
    if (!hasColumn) return new Map();
    return new Map(
      db
        .all('SELECT id, transcript_bytes FROM sessions WHERE transcript_bytes > 0')
        .map((r) => [String(r[0]), Number(r[1])]),
    );
  } finally {
    db.close();
  }
}
