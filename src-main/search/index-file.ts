import { existsSync, renameSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { Logger } from '../clock.js';

/**
 * The search index's file, `DATA_DIR/search.db`: its layout, and how it is opened. What it
 * holds and why is told by SearchIndex (search-index.ts).
 */

export const SEARCH_INDEX_FILE = 'search.db';
/** Bumped when the index's layout changes: an index of another format is rebuilt. */
export const SEARCH_INDEX_FORMAT = '7';
const FORMAT = SEARCH_INDEX_FORMAT;

/**
 * Each indexed piece's rowid says where it comes from: the session's number in the index
 * (times this), the message's position and the piece of that message.
 */
export const SESSION_STRIDE = 2 ** 32;

const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)',
  `CREATE TABLE IF NOT EXISTS sessions (
    sk INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    agent TEXT,
    repository TEXT,
    indexed INTEGER NOT NULL DEFAULT 0
  )`,
  // Contentless: the text is tokenized into the index and not kept.
  `CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5(
    text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
  )`,
  // Where each indexed message starts in its transcript (k: the session's key, then the message).
  'CREATE TABLE IF NOT EXISTS frames (k INTEGER PRIMARY KEY, offset INTEGER NOT NULL)',
  // Where each piece of a large message starts in the message's JSON bytes (k: the piece's
  // rowid in body; see PieceStart), so a hit there reads and decodes that piece alone.
  `CREATE TABLE IF NOT EXISTS pieces (
    k INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    until INTEGER NOT NULL,
    skip INTEGER NOT NULL,
    stack TEXT NOT NULL,
    in_string INTEGER NOT NULL
  )`,
  // The index's term list, with how many pieces each term is in.
  `CREATE VIRTUAL TABLE IF NOT EXISTS body_vocab USING fts5vocab(body, row)`,
];

/**
 * FTS5 merges its segments inside the write that makes one too many, which can hold the
 * writer for long (and what it has to write waits); here merging happens in bounded steps
 * between writes instead.
 */
const MERGING = [
  "INSERT INTO body(body, rank) VALUES ('hashsize', 131072)",
  "INSERT INTO body(body, rank) VALUES ('automerge', 0)",
  "INSERT INTO body(body, rank) VALUES ('crisismerge', 200)",
];

/**
 * Opens the index file; one of another format is removed, one that cannot be read is put aside
 * (as `search.db.damaged-<time>`), and an empty index starts in their place. (No integrity check here: it would read
 * the whole file at every start; `doctor` runs one.)
 */
export function openIndexFile(file: string, logger: Logger, now: () => number): DatabaseSync {
  const files = [file, `${file}-wal`, `${file}-shm`];
  if (existsSync(file)) {
    let damage: string | null = null;
    try {
      const db = new DatabaseSync(file);
      const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").get();
      if (format?.value === FORMAT) return tune(db);
      db.close();
      // Another format: nothing in it is needed, so it goes (it may be gigabytes).
      for (const path of files) rmSync(path, { force: true });
      logger.info(`The search index is of format ${String(format?.value)}, not ${FORMAT}; rebuilding it.`);
    } catch (err) {
      damage = err instanceof Error ? err.message : String(err);
    }
    if (damage !== null) {
      const aside = `${file}.damaged-${now()}`;
      for (const path of files) {
        if (existsSync(path)) renameSync(path, path.replace(file, aside));
      }
      logger.warn(`The search index could not be used (${damage}); kept aside as ${aside}, rebuilding it.`);
    }
  }
  const db = tune(new DatabaseSync(file));
  db.exec(SCHEMA.join(';'));
  for (const statement of MERGING) db.exec(statement);
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)").run(FORMAT);
  return db;
}

function tune(db: DatabaseSync): DatabaseSync {
  // The index can always be rebuilt, so it is never synced (a checkpoint's fsync would only
  // slow it): a process crash cannot damage it; a power cut may, and then it is rebuilt.
  // The server's thread reads only the small sessions table here: a cache of 2 MB holds it.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -2000');
  return db;
}
