import type { Store } from '../store/store.js';

interface Entry {
  workspaceId: string;
  body: Buffer;
}

/**
 * The full form of recently read sessions (GET /api/sessions/:id), encoded once as the
 * exact response bytes. Reading a session from sql.js and encoding it costs several times
 * more than sending it, and scripts and the dashboard read the same sessions again and again.
 *
 * An entry is dropped as soon as a write says its session is changing (`db.changed`), and
 * everything is dropped when the store reloads from disk, so a hit is always what a read of
 * the database would answer. Least recently used entries go first once `maxBytes` is reached.
 */
export class SessionCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly unsubscribe: () => void;

  constructor(
    store: Store,
    private readonly maxBytes: number,
  ) {
    this.unsubscribe = store.onChange((key) => {
      if (key === null) this.clear();
      else this.delete(key);
    });
  }

  get(sessionId: string): Entry | undefined {
    const entry = this.entries.get(sessionId);
    if (entry) {
      // Map keeps insertion order: moving a hit to the end keeps the oldest first in line.
      this.entries.delete(sessionId);
      this.entries.set(sessionId, entry);
    }
    return entry;
  }

  set(sessionId: string, workspaceId: string, body: Buffer): void {
    this.delete(sessionId);
    // One huge session must not push out everything else.
    if (body.length > this.maxBytes / 4) return;
    this.entries.set(sessionId, { workspaceId, body });
    this.bytes += body.length;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.body.length;
    }
  }

  delete(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry) return;
    this.entries.delete(sessionId);
    this.bytes -= entry.body.length;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** How much is held, for tests and the benchmark. */
  size(): { sessions: number; bytes: number } {
    return { sessions: this.entries.size, bytes: this.bytes };
  }

  close(): void {
    this.unsubscribe();
    this.clear();
  }
}
