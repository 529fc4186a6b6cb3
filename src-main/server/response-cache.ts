/** A page of the list as JSON text: the `sessions` array, and the cursor after it if more follow. */
export interface ListPageText {
  sessions: string;
  nextCursor?: string;
  /** With a limit: how many sessions match the filters. */
  total?: number;
}

/**
 * Where a cache hears that a session is changing (its id), or that everything may have (null):
 * the sql.js store's `onChange`.
 */
export interface SessionChanges {
  onChange(listener: (sessionId: string | null) => void): () => void;
}

/** What an entry costs besides its answer and key: the Map slot and the entry's objects. */
export const ENTRY_OVERHEAD_BYTES = 200;

interface Entry<V> {
  workspaceId: string;
  value: V;
  bytes: number;
}

/**
 * Answers built from sessions, kept for repeated reads: reading sessions from sql.js and
 * encoding them costs several times more than sending them, and scripts and the dashboard
 * read the same ones again and again.
 *
 * Entries are dropped as soon as a write says a session is changing (`db.changed`): only
 * that session's entry (`drop: 'that session'`, keyed by session id) or every entry
 * (`drop: 'all'`, for lists, which any session can enter or leave). A reload from disk
 * drops everything. So a hit is always what a read of the database would answer. Least
 * recently used entries go first once `maxBytes` is reached.
 */
export class ResponseCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Reads under way (see `begin`), by key; a change to the key makes them stale. */
  private readonly reads = new Map<string, Set<{ stale: boolean }>>();
  private bytes = 0;
  private readonly unsubscribe: () => void;

  constructor(
    changes: SessionChanges,
    private readonly options: {
      maxBytes: number;
      drop: 'that session' | 'all';
      sizeOf: (value: V) => number;
    },
  ) {
    this.unsubscribe = changes.onChange((sessionId) => {
      if (sessionId === null || options.drop === 'all') {
        this.clear();
        for (const readers of this.reads.values()) for (const r of readers) r.stale = true;
      } else {
        this.delete(sessionId);
        for (const r of this.reads.get(sessionId) ?? []) r.stale = true;
      }
    });
  }

  /**
   * Starts a read that awaits (a transcript) before its answer is known: `keep` caches the
   * answer only if no write changed the key meanwhile, and `done` ends the read either way.
   */
  begin(key: string): { keep(workspaceId: string, value: V): void; done(): void } {
    const reader = { stale: false };
    let readers = this.reads.get(key);
    if (!readers) this.reads.set(key, (readers = new Set()));
    readers.add(reader);
    const done = () => {
      readers.delete(reader);
      if (readers.size === 0 && this.reads.get(key) === readers) this.reads.delete(key);
    };
    return {
      keep: (workspaceId, value) => {
        if (!reader.stale) this.set(key, workspaceId, value);
        done();
      },
      done,
    };
  }

  get(key: string): { workspaceId: string; value: V } | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Map keeps insertion order: moving a hit to the end keeps the oldest first in line.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, workspaceId: string, value: V): void {
    this.delete(key);
    // The key and the entry's own objects count too: an empty list page is a few bytes of
    // answer, but its key (a search text) and bookkeeping are not free.
    const bytes = this.options.sizeOf(value) + key.length * 2 + ENTRY_OVERHEAD_BYTES;
    // One huge answer must not push out everything else.
    if (bytes > this.options.maxBytes / 4) return;
    this.entries.set(key, { workspaceId, value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** How much is held, for tests and the benchmark. */
  size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  close(): void {
    this.unsubscribe();
    this.clear();
  }
}
