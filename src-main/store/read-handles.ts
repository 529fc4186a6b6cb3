import type { FileHandle } from 'node:fs/promises';

interface Entry {
  opening: Promise<FileHandle>;
  /** Reads using the handle now: it is closed only once they are done. */
  users: number;
  /** Dropped from the cache (evicted, removed, or all closed): close once unused. */
  dropped: boolean;
  closed: boolean;
}

/**
 * Transcripts kept open for reading, the most recently used `capacity` of them: a search reads
 * one message from each of its hits, and opening and closing the file for each read was two of
 * its three trips to the thread pool. Transcripts are only appended to (a cut-back truncates the
 * same file), so a handle stays good until its file is removed. A handle in use is never closed
 * under its reader: one dropped while read is closed when its last reader is done.
 */
export class ReadHandles {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly open: (key: string) => Promise<FileHandle>,
    private readonly capacity: number,
  ) {}

  async with<T>(key: string, read: (handle: FileHandle) => Promise<T>): Promise<T> {
    let entry = this.entries.get(key);
    if (entry) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
    } else {
      entry = { opening: this.open(key), users: 0, dropped: false, closed: false };
      this.entries.set(key, entry);
      this.evict();
    }
    entry.users += 1;
    let handle: FileHandle;
    try {
      handle = await entry.opening;
    } catch (err) {
      entry.users -= 1;
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw err;
    }
    try {
      return await read(handle);
    } finally {
      entry.users -= 1;
      await closeIfIdle(entry, handle);
    }
  }

  /** Forgets the file's handle (before the file is removed), closing it once unused. */
  async drop(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    await this.retire(entry);
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((entry) => this.retire(entry)));
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.capacity) break;
      this.entries.delete(key);
      void this.retire(entry);
    }
  }

  private async retire(entry: Entry): Promise<void> {
    entry.dropped = true;
    const handle = await entry.opening.catch(() => null);
    if (handle) await closeIfIdle(entry, handle);
  }
}

async function closeIfIdle(entry: Entry, handle: FileHandle): Promise<void> {
  if (!entry.dropped || entry.users > 0 || entry.closed) return;
  entry.closed = true;
  await handle.close().catch(() => undefined);
}
