import { createHash } from 'node:crypto';
import { lstat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { readChatDocument, type ChatDocument } from './gemini-document.js';
import { LINE_MAX_BYTES, oversizeLine } from './file-reader.js';
import { entryKind, ONLY_REGULAR, openRegularFile, SkippedEntry } from './safe-files.js';
import type { SessionFile, Skips } from './source-entries.js';

/**
 * OpenCode keeps its conversations in one SQLite database, `opencode.db` in its data folder
 * (`$XDG_DATA_HOME/opencode`): tables `session`, `message` (one row per prompt and per model
 * step, its JSON in `data`) and `part` (a message's text, reasoning, tool calls with their
 * state, step ends with tokens and cost). The importer reads append-only files from an offset;
 * the fit: each OpenCode session is a "session file" whose path is the database's followed by
 * `#<session id>`, read as a chat document (gemini-document.ts) of its messages in order, the
 * session's row first. Its offset counts the messages read. A message is read once it is
 * complete (an assistant step once OpenCode records its end and its parts are there; a prompt
 * once its text is there), unless the session has been quiet long enough to be settled:
 * OpenCode rewrites a message's parts while it streams, each row a write of its own, and a
 * message read whole is never read again. Its size and time are
 * the count of the session's rows and its latest `time_updated`, so an unchanged session is
 * passed without reading it. Messages taken away (OpenCode's revert) make the session shorter
 * than what was read: it is read again into a session of its own, as a rewritten file is.
 *
 * The database is another program's file: it is opened read-only, only when it, and the
 * `-wal`/`-shm` files beside it, are regular files inside the folder (the same rules as every
 * CLI file), and a database that is locked, damaged or not OpenCode's is noted and passed.
 * Its WAL is read as SQLite reads it: what a running OpenCode committed is seen.
 */

/** The database's file in OpenCode's data folder. */
export const OPENCODE_DATABASE = 'opencode.db';
/** How long a read waits for OpenCode's own write to finish (the database is locked meanwhile). */
const BUSY_TIMEOUT_MS = 1000;
/** At most this many messages of one session are read: what is past it waits for the next scan. */
const MESSAGE_LIMIT = 100_000;

/** The session file's path for an OpenCode session: the database's, then `#` and the session's id. */
export function opencodeSessionPath(rootDir: string, sessionId: string): string {
  return `${join(rootDir, OPENCODE_DATABASE)}#${sessionId}`;
}

/** Checks the database and its WAL files are regular files inside `rootDir` (SkippedEntry if not). */
async function checkFiles(rootDir: string): Promise<string | null> {
  const path = join(rootDir, OPENCODE_DATABASE);
  try {
    // The checks of any CLI file: no link on the way, no pipe, nothing that waits.
    await (await openRegularFile(rootDir, path)).close();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  for (const side of ['-wal', '-shm']) {
    const info = await lstat(path + side).catch(() => null);
    if (info && !info.isFile()) throw new SkippedEntry(path + side, `${entryKind(info)}: ${ONLY_REGULAR}`);
  }
  return path;
}

/** Why a database cannot be read, in a person's words. */
function unreadable(path: string, err: unknown): SkippedEntry {
  const message = (err as Error).message ?? String(err);
  if (/locked|busy/iu.test(message))
    return new SkippedEntry(path, 'OpenCode held it locked: it is read at the next scan');
  return new SkippedEntry(path, `it cannot be read as OpenCode's database: ${message}`);
}

/** Runs `read` on the database opened read-only, closing it after; SkippedEntry says why not. */
function withDatabase<T>(path: string, read: (db: DatabaseSync) => T): T {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw unreadable(path, err);
  }
  try {
    return read(db);
  } catch (err) {
    throw unreadable(path, err);
  } finally {
    db.close();
  }
}

type Row = Record<string, unknown>;

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The sessions in an OpenCode folder's database, as session files; none when it has no database. */
export async function opencodeSessionFiles(rootDir: string, skips: Skips): Promise<SessionFile[]> {
  const path = await skips.guard(() => checkFiles(rootDir), null);
  if (!path) return [];
  try {
    return withDatabase(path, (db) =>
      db
        .prepare('SELECT id FROM session ORDER BY time_updated DESC, id')
        .all()
        .flatMap((row: Row) => {
          const id = text(row.id);
          return id ? [{ path: opencodeSessionPath(rootDir, id), database: { path, sessionId: id } }] : [];
        }),
    );
  } catch (err) {
    if (!(err instanceof SkippedEntry)) throw err;
    skips.add(err.path, err.reason);
    return [];
  }
}

/** How much an OpenCode session holds and when it last changed: a session file's size and time. */
export interface SessionExtent {
  size: number;
  mtimeMs: number;
}

/** The session's extent, or null when it is gone; SkippedEntry when the database cannot be read. */
export async function opencodeSessionExtent(
  rootDir: string,
  sessionId: string,
): Promise<SessionExtent | null> {
  const path = await checkFiles(rootDir);
  if (!path) return null;
  return withDatabase(path, (db) => {
    const session = db.prepare('SELECT time_updated FROM session WHERE id = ?').get(sessionId) as
      Row | undefined;
    if (!session) return null;
    const rows = db
      .prepare(
        `SELECT count(*) AS n, max(time_updated) AS at FROM (
           SELECT time_updated FROM message WHERE session_id = ?
           UNION ALL SELECT time_updated FROM part WHERE session_id = ?)`,
      )
      .get(sessionId, sessionId) as Row;
    return { size: count(rows.n), mtimeMs: Math.max(count(session.time_updated), count(rows.at)) };
  });
}

/** A row's JSON `data` as an object with the row's id and times; a row too large or not JSON as text. */
function rowRecord(row: Row): Row | string {
  if (row.data === null) return oversizeLine(count(row.bytes));
  try {
    const data = JSON.parse(String(row.data)) as unknown;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return String(row.data);
    return { ...(data as Row), id: row.id, time_created: row.time_created, time_updated: row.time_updated };
  } catch {
    return String(row.data);
  }
}

/**
 * Whether OpenCode is done writing a message: a prompt with its text; a step that failed, or
 * that it ended and whose parts are there. Each row is a write of its own, so a reader can come
 * between a step's row and its parts: a step marked ended with no part yet waits for them.
 */
function complete(message: Row, parts: unknown[]): boolean {
  if (message.error !== undefined && message.role !== 'user') return true;
  if (message.role === 'user') return parts.length > 0;
  const time = message.time as Row | undefined;
  return typeof time?.completed === 'number' && parts.length > 0;
}

/**
 * An OpenCode session as a chat document: its row first, then one line per message holding its
 * parts in order; `settled`, the messages OpenCode never finished too.
 */
export async function readOpencodeSession(
  rootDir: string,
  sessionId: string,
  settled: boolean,
): Promise<ChatDocument | null> {
  const path = await checkFiles(rootDir);
  if (!path) return null;
  const read = withDatabase(path, (db) => {
    const session = db.prepare('SELECT * FROM session WHERE id = ?').get(sessionId) as Row | undefined;
    if (!session) return null;
    // Rows larger than a message a session can store are not loaded: they are said to be left out.
    const pick = `id, time_created, time_updated, length(data) AS bytes,
      CASE WHEN length(data) > ${LINE_MAX_BYTES} THEN NULL ELSE data END AS data`;
    const messages = db
      .prepare(
        `SELECT ${pick} FROM message WHERE session_id = ? ORDER BY time_created, id LIMIT ${MESSAGE_LIMIT}`,
      )
      .all(sessionId) as Row[];
    const parts = db.prepare(`SELECT message_id, ${pick} FROM part WHERE session_id = ? ORDER BY id`);
    const byMessage = new Map<unknown, unknown[]>();
    for (const part of parts.iterate(sessionId) as Iterable<Row>) {
      const list = byMessage.get(part.message_id) ?? [];
      list.push(rowRecord(part));
      byMessage.set(part.message_id, list);
    }
    return { session, messages, byMessage };
  });
  if (!read) return null;
  const lines: string[] = [];
  for (const row of read.messages) {
    const message = rowRecord(row);
    if (typeof message === 'string') {
      lines.push(message);
      continue;
    }
    const parts = read.byMessage.get(row.id) ?? [];
    if (!settled && !complete(message, parts)) break;
    lines.push(JSON.stringify({ message, parts }));
  }
  const { session } = read;
  const header = JSON.stringify({ session });
  const fingerprint = createHash('sha256')
    .update(`${String(session.id)} ${String(session.time_created)}`)
    .digest('hex')
    .slice(0, 32);
  return {
    fingerprint,
    resumeAt(last) {
      if (!last || last.fingerprint !== fingerprint || read.messages.length < last.offset) return 0;
      return last.offset;
    },
    async *batches(from) {
      // The session's row comes again at each read: its title and times may have changed.
      yield { lines: [header, ...lines.slice(from)], end: Math.max(from, lines.length) };
    },
  };
}

/** An OpenCode session's extent; null, and noted, when its database cannot be read now. */
export async function storedExtent(rootDir: string, sessionId: string, skips: Skips | undefined) {
  try {
    return await opencodeSessionExtent(rootDir, sessionId);
  } catch (err) {
    if (!(err instanceof SkippedEntry)) throw err;
    skips?.add(err.path, err.reason);
    return null;
  }
}

/** The file as a chat document: Gemini CLI's older JSON file, or an OpenCode session; null for lines. */
export async function chatOf(
  rootDir: string,
  file: SessionFile,
  handle: FileHandle | null,
  size: number,
  stale: boolean,
  skips: Skips | undefined,
): Promise<ChatDocument | null> {
  if (file.database) {
    try {
      return await readOpencodeSession(rootDir, file.database.sessionId, stale);
    } catch (err) {
      if (!(err instanceof SkippedEntry)) throw err;
      skips?.add(err.path, err.reason);
      return null;
    }
  }
  return file.document && handle ? readChatDocument(handle, size, stale) : null;
}
