import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SEARCH_INDEX_FILE, SEARCH_INDEX_FORMAT } from './search-index.js';

export type SearchIndexReport =
  | { state: 'missing' }
  | { state: 'damaged'; why: string }
  | { state: 'ok'; sessions: number; behind: number };

/**
 * What `doctor` says of the search index, read without writing: whether it opens, passes
 * SQLite's check and is of this app's format, and how many sessions have messages it has not
 * indexed yet. `messageCounts` is what the store holds (null when the store could not be read).
 */
export function inspectSearchIndex(
  dataDir: string,
  messageCounts: ReadonlyArray<{ id: string; messageCount: number }> | null,
): SearchIndexReport {
  const file = join(dataDir, SEARCH_INDEX_FILE);
  if (!existsSync(file)) return { state: 'missing' };
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(file, { readOnly: true });
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
