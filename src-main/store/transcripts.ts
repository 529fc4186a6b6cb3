import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../clock.js';
import { TranscriptDamagedError } from './errors.js';
import type { FileLayer } from './file-layer.js';
import { ReadHandles } from './read-handles.js';
import {
  FRAME_HEADER_BYTES,
  FRAME_OVERHEAD_BYTES,
  FrameReader,
  MAX_MESSAGE_BYTES,
  onePayload,
  TranscriptDamage,
  wholeFrameBytes,
  type PayloadPiece,
} from './transcript-format.js';

/** Bytes staged by a write for one transcript: they go on disk before the write commits. */
export interface StagedAppend {
  sessionId: string;
  /** Where they go: the transcript's committed length when the write ran. */
  offset: number;
  bytes: Buffer;
}

export const TRANSCRIPTS_DIR = 'transcripts';
const READ_CHUNK_BYTES = 256 * 1024;
/**
 * What `readFrame` reads first: most messages fit, so one read gets the whole frame; a larger
 * one takes a second read of exactly the rest.
 */
const FRAME_FIRST_READ_BYTES = 16 * 1024;
/** Open append handles kept between writes; more sessions than this reopen their file. */
const MAX_OPEN_HANDLES = 64;
/** Transcripts kept open for a search's one-message reads (`readFrame`). */
const MAX_READ_HANDLES = 64;

/** A transcript that does not hold what the database says was committed to it. */

export function transcriptPath(dataDir: string, sessionId: string): string {
  return join(dataDir, TRANSCRIPTS_DIR, `${sessionId}.transcript`);
}

/**
 * The transcript files of a data directory: durable appends of staged bytes (called by the
 * journal before it commits the write that staged them) and reads of committed bytes.
 */
export class Transcripts {
  private readonly handles = new Map<string, FileHandle>();
  private readonly readHandles = new ReadHandles(
    (sessionId) => this.openToRead(this.path(sessionId)),
    MAX_READ_HANDLES,
  );
  private dirReady = false;

  constructor(
    private readonly files: FileLayer,
    readonly dataDir: string,
    private readonly logger: Logger,
  ) {}

  path(sessionId: string): string {
    return transcriptPath(this.dataDir, sessionId);
  }

  /**
   * Writes every staged append and fsyncs each file it touched; resolves once all of them
   * are durable. Batches run one at a time (the journal's flush loop), so when one starts,
   * every earlier batch is committed: the lowest offset staged for a file is its committed
   * length, and anything beyond it on disk was left by a write that never committed.
   */
  async writeBatch(appends: StagedAppend[]): Promise<void> {
    if (appends.length === 0) return;
    const bySession = new Map<string, StagedAppend[]>();
    for (const append of appends) {
      const list = bySession.get(append.sessionId);
      if (list) list.push(append);
      else bySession.set(append.sessionId, [append]);
    }
    await this.ensureDir();
    await Promise.all(
      [...bySession].map(async ([sessionId, list]) => {
        const committed = Math.min(...list.map((a) => a.offset));
        const handle = await this.handleFor(sessionId, committed);
        for (const append of list) await this.files.write(handle, append.bytes, append.offset);
        await this.files.datasync(handle);
      }),
    );
    // Only between batches: a handle closed during one could be another file's in use.
    for (const [oldest, handle] of this.handles) {
      if (this.handles.size <= MAX_OPEN_HANDLES) break;
      this.handles.delete(oldest);
      await handle.close().catch(() => undefined);
    }
  }

  /** Closes every open handle (on close, and before a reload from disk after a failure). */
  async closeAll(): Promise<void> {
    const open = [...this.handles.values()];
    this.handles.clear();
    await Promise.all([...open.map((h) => h.close().catch(() => undefined)), this.readHandles.closeAll()]);
  }

  /**
   * Checks each transcript against its committed length (at start-up): bytes past it were
   * written by a write that never committed and are cut back (kept aside); a file shorter
   * than committed is damage.
   */
  async reconcile(committed: Array<{ sessionId: string; bytes: number }>): Promise<void> {
    const short: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < committed.length) {
        const { sessionId, bytes } = committed[next++] as { sessionId: string; bytes: number };
        const size = await this.sizeOf(sessionId);
        if (size === null) short.push(`${this.path(sessionId)} (missing; ${bytes} bytes are committed)`);
        else if (size < bytes) short.push(`${this.path(sessionId)} (${size} of ${bytes} bytes)`);
        else if (size > bytes) await this.cutBack(sessionId, bytes);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, committed.length) }, worker));
    if (short.length > 0) {
      throw new TranscriptDamagedError(
        `${short.length === 1 ? 'A transcript is' : `${short.length} transcripts are`} shorter than ` +
          `the database says: ${short.slice(0, 5).join(', ')}${short.length > 5 ? ', …' : ''}. ` +
          'Run `sessiondesk doctor` to see what can be recovered.',
      );
    }
  }

  /**
   * The payloads of the frames in [from, to) of a transcript, piece by piece. `from` must be
   * a frame boundary and `to` the end of a frame (a committed length, or a mark).
   */
  async *readPayloads(sessionId: string, from: number, to: number): AsyncGenerator<PayloadPiece> {
    if (to <= from) return;
    const path = this.path(sessionId);
    const handle = await this.openToRead(path);
    try {
      const reader = new FrameReader(from);
      let position = from;
      while (position < to) {
        const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, to - position));
        const read = await this.files.read(handle, chunk, position);
        if (read === 0) {
          throw new TranscriptDamagedError(`${path} ends at byte ${position}; ${to} bytes are committed.`);
        }
        position += read;
        try {
          yield* reader.push(read === chunk.length ? chunk : chunk.subarray(0, read));
        } catch (err) {
          if (err instanceof TranscriptDamage) throw new TranscriptDamagedError(`${path}: ${err.message}`);
          throw err;
        }
      }
      if (!reader.atBoundary) throw new TranscriptDamagedError(`${path}: a frame is cut off at byte ${to}`);
    } finally {
      await handle.close();
    }
  }

  /**
   * The payload of the one frame that starts at `offset` (a frame boundary below `to`, the
   * committed length), read by the frame's own length rather than in READ_CHUNK_BYTES: a search
   * hit reads one message, most of them a few KB. Checked as `readPayloads` checks every frame.
   * The file stays open for the next hit in it (ReadHandles).
   */
  async readFrame(sessionId: string, offset: number, to: number): Promise<Buffer> {
    const path = this.path(sessionId);
    return this.readHandles.with(sessionId, async (handle) => {
      const readExactly = async (into: Buffer, position: number) => {
        for (let filled = 0; filled < into.length;) {
          const read = await this.files.read(handle, into.subarray(filled), position + filled);
          if (read === 0) {
            throw new TranscriptDamagedError(
              `${path} ends at byte ${position + filled}; ${to} bytes are committed.`,
            );
          }
          filled += read;
        }
      };
      const first = Buffer.allocUnsafe(Math.min(FRAME_FIRST_READ_BYTES, to - offset));
      await readExactly(first, offset);
      const frameBytes = wholeFrameBytes(first, offset, to);
      if (frameBytes === null) throw new TranscriptDamagedError(`${path}: no whole frame at byte ${offset}`);
      let frame = first.subarray(0, Math.min(first.length, frameBytes));
      if (frame.length < frameBytes) {
        frame = Buffer.concat([frame, Buffer.allocUnsafe(frameBytes - frame.length)], frameBytes);
        await readExactly(frame.subarray(first.length), offset + first.length);
      }
      try {
        return onePayload(frame, offset);
      } catch (err) {
        if (err instanceof TranscriptDamage) throw new TranscriptDamagedError(`${path}: ${err.message}`);
        throw err;
      }
    });
  }

  /**
   * Bytes `from` to `until` of the payload of the frame at `offset` (a frame boundary below
   * `to`, the committed length), and the payload's length: a search hit's piece of a large
   * message, without reading the megabytes around it. Its checksum covers the whole payload, so
   * these bytes are not checked against it: the caller checks that they make what it expects,
   * and reads the whole frame (readFrame) when they do not.
   */
  async readPayloadRange(
    sessionId: string,
    offset: number,
    to: number,
    from: number,
    until: number,
  ): Promise<{ bytes: Buffer; payloadBytes: number }> {
    const path = this.path(sessionId);
    return this.readHandles.with(sessionId, async (handle) => {
      const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
      const bytes = Buffer.allocUnsafe(Math.max(0, until - from));
      const [headerRead, bytesRead] = await Promise.all([
        this.files.read(handle, header, offset),
        this.files.read(handle, bytes, offset + FRAME_HEADER_BYTES + from),
      ]);
      const payloadBytes = headerRead === FRAME_HEADER_BYTES ? header.readUInt32LE(0) : -1;
      if (
        payloadBytes <= 0 ||
        payloadBytes > MAX_MESSAGE_BYTES ||
        offset + payloadBytes + FRAME_OVERHEAD_BYTES > to ||
        from < 0 ||
        until > payloadBytes ||
        bytesRead !== bytes.length
      ) {
        throw new TranscriptDamagedError(
          `${path}: no payload bytes ${from} to ${until} in a frame at byte ${offset}`,
        );
      }
      return { bytes, payloadBytes };
    });
  }

  private async openToRead(path: string): Promise<FileHandle> {
    try {
      return await this.files.open(path, 'r');
    } catch (err) {
      throw new TranscriptDamagedError(`${path} cannot be read: ${(err as Error).message}`);
    }
  }

  /** The first `length` bytes of a transcript as they are on disk, in pieces (for backups). */
  async *readRaw(sessionId: string, length: number): AsyncGenerator<Buffer> {
    const path = this.path(sessionId);
    const handle = await this.files.open(path, 'r');
    try {
      for (let position = 0; position < length;) {
        const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, length - position));
        const read = await this.files.read(handle, chunk, position);
        if (read === 0) {
          throw new TranscriptDamagedError(
            `${path} ends at byte ${position}; ${length} bytes are committed.`,
          );
        }
        position += read;
        yield read === chunk.length ? chunk : chunk.subarray(0, read);
      }
    } finally {
      await handle.close();
    }
  }

  /** Removes a session's transcript (after the session itself is gone from the database). */
  async remove(sessionId: string): Promise<void> {
    await this.readHandles.drop(sessionId);
    await this.handles.get(sessionId)?.close();
    this.handles.delete(sessionId);
    await this.files.unlink(this.path(sessionId)).catch(() => undefined);
  }

  private async sizeOf(sessionId: string): Promise<number | null> {
    try {
      return await this.files.size(this.path(sessionId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  private async ensureDir(): Promise<void> {
    if (this.dirReady) return;
    await this.files.mkdir(join(this.dataDir, TRANSCRIPTS_DIR));
    this.dirReady = true;
  }

  /** An append handle, opening (or creating) the file and cutting uncommitted bytes first. */
  private async handleFor(sessionId: string, committed: number): Promise<FileHandle> {
    const open = this.handles.get(sessionId);
    if (open) {
      this.handles.delete(sessionId);
      this.handles.set(sessionId, open);
      return open;
    }
    const path = this.path(sessionId);
    let handle: FileHandle;
    if (committed === 0) {
      // A new transcript (its first append starts with the header). A file already there
      // holds only bytes that never committed: kept aside, like any uncommitted tail.
      await this.cutBack(sessionId, 0);
      await this.files.unlink(path).catch(() => undefined);
      handle = await this.files.open(path, 'wx');
      try {
        // Its name must survive a crash as surely as its bytes.
        await this.files.syncDirOf(path);
      } catch (err) {
        await handle.close();
        throw err;
      }
    } else {
      await this.cutBack(sessionId, committed);
      handle = await this.files.open(path, 'r+');
    }
    this.handles.set(sessionId, handle);
    return handle;
  }

  /** Keeps bytes past `committed` aside (`.cut-<time>`) and truncates the file to it. */
  private async cutBack(sessionId: string, committed: number): Promise<void> {
    const size = await this.sizeOf(sessionId);
    if (size === null || size <= committed) return;
    const path = this.path(sessionId);
    const handle = await this.files.open(path, 'r+');
    try {
      const tail = Buffer.allocUnsafe(size - committed);
      const read = await this.files.read(handle, tail, committed);
      const aside = `${path}.cut-${Date.now()}`;
      const out = await this.files.open(aside, 'wx');
      try {
        await this.files.write(out, tail.subarray(0, read), 0);
        await this.files.datasync(out);
      } finally {
        await out.close();
      }
      await this.files.truncate(handle, committed);
      await this.files.datasync(handle);
      this.logger.warn(
        `${path}: ${size - committed} bytes past the committed end were left by an unfinished write; ` +
          `they were cut and kept as ${aside}.`,
      );
    } finally {
      await handle.close();
    }
  }
}
