import { crc32 } from 'node:zlib';
import type { FileHandle } from 'node:fs/promises';
import type { FileLayer } from './file-layer.js';
import type { StagedAppend } from './transcripts.js';

/**
 * The write-ahead journal: a header, then records of `[u32 length][u32 crc32][payload]`
 * (little-endian). A write is acknowledged only after its record is fsync'd. Appends that
 * arrive while an fsync is under way are written together by the next one (group commit).
 */
export const JOURNAL_MAGIC = Buffer.from('SDJRNL01', 'ascii');
const FRAME_HEADER = 8;
/** A length above this can only be damage: writes larger than this are refused (sqljs.ts). */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

export function frameRecord(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  payload.copy(frame, FRAME_HEADER);
  return frame;
}

export interface ParsedJournal {
  records: Buffer[];
  /** Bytes from the start of the file up to the end of the last intact record. */
  intactLength: number;
  /** Set when bytes follow the last intact record: a torn tail or damage. */
  damage?: JournalDamage;
}

export interface JournalDamage {
  offset: number;
  reason: string;
  bytes: number;
  /**
   * Whether it can be an append a crash cut off: no intact record follows the damage.
   * When one does, the damage is not at the end, and what follows may be acknowledged writes.
   */
  torn: boolean;
}

/** Whether a checksum-valid record starts anywhere in `bytes` from `from` on. */
export function intactRecordFrom(bytes: Buffer, from: number): boolean {
  for (let start = from; start + FRAME_HEADER < bytes.length; start += 1) {
    const length = bytes.readUInt32LE(start);
    // Most offsets fall inside JSON text, whose bytes read as a length far too large.
    if (length === 0 || length > MAX_RECORD_BYTES || start + FRAME_HEADER + length > bytes.length) continue;
    const payload = bytes.subarray(start + FRAME_HEADER, start + FRAME_HEADER + length);
    if (crc32(payload) === bytes.readUInt32LE(start + 4)) return true;
  }
  return false;
}

/** Reads records up to the first one that is incomplete or fails its checksum. */
export function parseJournal(bytes: Buffer): ParsedJournal {
  if (bytes.length < JOURNAL_MAGIC.length || !bytes.subarray(0, 8).equals(JOURNAL_MAGIC)) {
    // A crash while creating the file can leave a short header; anything else is not ours.
    const torn = bytes.length < JOURNAL_MAGIC.length && JOURNAL_MAGIC.subarray(0, bytes.length).equals(bytes);
    return {
      records: [],
      intactLength: 0,
      damage: {
        offset: 0,
        reason: torn ? 'torn header' : 'not a journal file',
        bytes: bytes.length,
        torn: !intactRecordFrom(bytes, 1),
      },
    };
  }
  const records: Buffer[] = [];
  let offset = JOURNAL_MAGIC.length;
  while (offset < bytes.length) {
    const remaining = bytes.length - offset;
    const fail = (reason: string): ParsedJournal => ({
      records,
      intactLength: offset,
      damage: { offset, reason, bytes: remaining, torn: !intactRecordFrom(bytes, offset + 1) },
    });
    if (remaining < FRAME_HEADER) return fail('torn record header');
    const length = bytes.readUInt32LE(offset);
    if (length > MAX_RECORD_BYTES) return fail('impossible record length');
    // No write is empty: zeros are space the file system allocated but never wrote.
    if (length === 0) return fail('empty record');
    if (remaining < FRAME_HEADER + length) return fail('torn record');
    const payload = bytes.subarray(offset + FRAME_HEADER, offset + FRAME_HEADER + length);
    if (crc32(payload) !== bytes.readUInt32LE(offset + 4)) return fail('checksum mismatch');
    records.push(payload);
    offset += FRAME_HEADER + length;
  }
  return { records, intactLength: offset };
}

/** Makes a batch's transcript bytes durable; runs before the batch's records are written. */
export type BeforeCommit = (staged: StagedAppend[]) => Promise<void>;

interface Pending {
  frame: Buffer;
  staged: StagedAppend[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

const noTranscripts: BeforeCommit = () => Promise.resolve();

export class Journal {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly files: FileLayer,
    private readonly handle: FileHandle,
    readonly path: string,
    private length: number,
    private readonly onFailure: (err: unknown) => void,
    private readonly beforeCommit: BeforeCommit,
  ) {}

  /** Opens an existing journal to append after `intactLength`, cutting anything beyond it. */
  static async openForAppend(
    files: FileLayer,
    path: string,
    intactLength: number,
    onFailure: (err: unknown) => void,
    beforeCommit: BeforeCommit = noTranscripts,
  ): Promise<Journal> {
    const handle = await files.open(path, 'r+');
    try {
      const { size } = await handle.stat();
      if (size === intactLength && intactLength >= JOURNAL_MAGIC.length) {
        return new Journal(files, handle, path, intactLength, onFailure, beforeCommit);
      }
      if (intactLength < JOURNAL_MAGIC.length) {
        await files.truncate(handle, 0);
        await files.write(handle, JOURNAL_MAGIC, 0);
        intactLength = JOURNAL_MAGIC.length;
      } else {
        await files.truncate(handle, intactLength);
      }
      await files.datasync(handle);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return new Journal(files, handle, path, intactLength, onFailure, beforeCommit);
  }

  /** Creates a new, empty journal and makes its directory entry durable. */
  static async create(
    files: FileLayer,
    path: string,
    onFailure: (err: unknown) => void,
    beforeCommit: BeforeCommit = noTranscripts,
  ): Promise<Journal> {
    const handle = await files.open(path, 'wx');
    try {
      await files.write(handle, JOURNAL_MAGIC, 0);
      await files.datasync(handle);
      await files.syncDirOf(path);
    } catch (err) {
      await handle.close();
      await files.unlink(path).catch(() => undefined);
      throw err;
    }
    return new Journal(files, handle, path, JOURNAL_MAGIC.length, onFailure, beforeCommit);
  }

  get size(): number {
    return this.length;
  }

  /**
   * Resolves once the record is on disk, and the transcript bytes its write staged before
   * it: a record never commits bytes that are not durable.
   */
  append(payload: Buffer, staged: StagedAppend[] = []): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal is closed'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ frame: frameRecord(payload), staged, resolve, reject });
      this.flushing ??= this.flushLoop().finally(() => {
        this.flushing = null;
      });
    });
  }

  /** Waits until every record appended so far has been written (or has failed). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    await this.handle.close();
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      const frames = batch.map((p) => p.frame);
      const total = frames.reduce((n, f) => n + f.length, 0);
      try {
        const staged = batch.flatMap((p) => p.staged);
        if (staged.length > 0) await this.beforeCommit(staged);
        await this.writeFrames(frames, total);
        this.length += total;
        for (const p of batch) p.resolve();
        // Writers that were in this round usually write again at once (an agent's next
        // message): let them queue before the next round starts, or it would carry only
        // the first of them and the rest would wait a whole round more.
        if (batch.length > 1) await new Promise((resolve) => setImmediate(resolve));
      } catch (err) {
        // Everything queued behind a failed batch was executed on top of it: fail it all.
        const failed = [...batch, ...this.queue.splice(0)];
        await this.files.truncate(this.handle, this.length).catch(() => undefined);
        for (const p of failed) p.reject(err);
        this.onFailure(err);
      }
    }
  }

  private async writeFrames(frames: Buffer[], total: number): Promise<void> {
    const data = frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames, total);
    await this.files.write(this.handle, data, this.length);
    await this.files.datasync(this.handle);
  }
}
