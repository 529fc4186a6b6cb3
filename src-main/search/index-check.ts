import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { SEARCH_INDEX_FILE, SEARCH_INDEX_FORMAT } from './index-file.js';

export type SearchIndexReport =
  | { state: 'missing' }
  | { state: 'in-use' }
  | { state: 'damaged'; why: string }
  | { state: 'ok'; sessions: number; behind: number };

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * What `doctor` says of the search index, touching nothing: whether it opens, passes SQLite's
 * check and is of this app's format, and how many sessions have messages it has not indexed
 * yet. `messageCounts` is what the store holds (null when the store could not be read). While
 * a server holds the directory (`live`) the index is its to write, and even a reader would
 * touch its shared-memory file, so only the file's header is read.
 */
export function inspectSearchIndex(
  dataDir: string,
  messageCounts: ReadonlyArray<{ id: string; messageCount: number }> | null,
  live: boolean,
): SearchIndexReport {
  const file = join(dataDir, SEARCH_INDEX_FILE);
  if (!existsSync(file)) return { state: 'missing' };
  if (live) {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, header, 0, header.length, 0);
    } finally {
      closeSync(fd);
    }
    return header.equals(SQLITE_HEADER)
      ? { state: 'in-use' }
      : { state: 'damaged', why: 'it is not an SQLite database' };
  }
  let db: DatabaseSync | null = null;
  try {
    // immutable: no lock, no shared memory, no journal: the directory is left exactly as it was.
    const url = pathToFileURL(file);
    url.searchParams.set('immutable', '1');
    db = new DatabaseSync(url, { readOnly: true });
    const check = db.prepare('PRAGMA quick_check').get();
    if (check?.quick_check !== 'ok')
      return { state: 'damaged', why: `quick_check: ${String(check?.quick_check)}` };
    const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").get();
    if (format?.value !== SEARCH_INDEX_FORMAT) {
      return {
        state: 'damaged',
        why: `it is of format ${String(format?.value)}, not ${SEARCH_INDEX_FORMAT}`,
      };
    }
    const indexed = new Map<string, number>();
    for (const row of db.prepare('SELECT id, indexed FROM sessions').all()) {
      indexed.set(String(row.id), Number(row.indexed));
    }
    const behind = (messageCounts ?? []).filter((s) => (indexed.get(s.id) ?? 0) !== s.messageCount).length;
    return { state: 'ok', sessions: indexed.size, behind };
  } catch (err) {
    return { state: 'damaged', why: err instanceof Error ? err.message : String(err) };
  } finally {
    db?.close();
  }
}
