import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineTooLong, readLines } from './lines.js';

/** Lines kept in memory before they go to a file: most sessions never reach it. */
const IN_MEMORY_BYTES = 8 * 2 ** 20;

/**
 * The message lines of one session being imported, held until the session's last line
 * has been read and checked, so that a session is written only once it is known whole.
 * A small session stays in memory; a big one goes to a file in the system's temp
 * directory (readable only by this user), read back line by line, and removed after.
 */
export class MessageSpool {
  private lines: string[] = [];
  private memoryBytes = 0;
  private file: { dir: string; path: string; handle: FileHandle; bytes: number } | null = null;
  count = 0;

  async add(line: string): Promise<void> {
    this.count += 1;
    if (this.file === null && this.memoryBytes + line.length <= IN_MEMORY_BYTES) {
      this.lines.push(line);
      this.memoryBytes += line.length;
      return;
    }
    if (this.file === null) {
      const dir = await mkdtemp(join(tmpdir(), 'sessiondesk-import-'));
      const path = join(dir, 'messages.ndjson');
      this.file = { dir, path, handle: await open(path, 'wx', 0o600), bytes: 0 };
      const held = this.lines;
      this.lines = [];
      this.memoryBytes = 0;
      if (held.length > 0) await this.append(held.join('\n'));
    }
    await this.append(line);
  }

  /** Whether every line is in memory (a session small enough to be written in one write). */
  get inMemory(): boolean {
    return this.file === null;
  }

  private async append(lines: string): Promise<void> {
    const file = this.file as NonNullable<MessageSpool['file']>;
    const bytes = Buffer.from(`${lines}\n`, 'utf8');
    await file.handle.write(bytes, 0, bytes.length, file.bytes);
    file.bytes += bytes.length;
  }

  /** The lines in the order they were added. */
  async *read(): AsyncGenerator<string> {
    if (this.file === null) {
      yield* this.lines;
      return;
    }
    for await (const line of readLines(createReadStream(this.file.path))) {
      // Written here from lines that were read whole, so only a changed file can do this.
      if (line instanceof LineTooLong) throw new Error(`${this.file.path} changed while it was read`);
      yield line;
    }
  }

  async discard(): Promise<void> {
    this.lines = [];
    const file = this.file;
    this.file = null;
    if (file) {
      await file.handle.close().catch(() => undefined);
      await rm(file.dir, { recursive: true, force: true });
    }
  }
}
