import { crc32 } from 'node:zlib';
import type { FileHandle } from 'node:fs/promises';
import { describeError } from './errors.js';
import type { FileLayer } from './file-layer.js';
import {
  intactRecordFrom,
  JOURNAL_MAGIC,
  MAX_RECORD_BYTES,
  parseJournal,
  type JournalDamage,
} from './journal.js';

const FRAME_HEADER = 8;
/** Bytes read at a time, and records handed on together: opening never holds a whole journal. */
const CHUNK_BYTES = 1024 * 1024;

/** What reading a journal found; its records went to `onRecords` as they were read. */
export interface JournalScan {
  size: number;
  /** Records read intact (and accepted by `onRecords`). */
  records: number;
  /** Bytes from the start of the file up to the end of the last intact record. */
  intactLength: number;
  damage?: JournalDamage;
}

/**
 * Takes a batch of intact records in file order; returns how many it applied, and the error
 * that stopped it at the next one, if any (a record that cannot be replayed).
 */
export type RecordSink = (records: Buffer[]) => { applied: number; error?: unknown };

async function readAt(
  files: FileLayer,
  handle: FileHandle,
  position: number,
  length: number,
): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  const read = await files.read(handle, buffer, position);
  return read === length ? buffer : buffer.subarray(0, read);
}

/**
 * Reads a journal from disk in chunks of about 1 MiB, handing its records to `sink` in
 * batches, and stops at the first record that is incomplete, fails its checksum, or that
 * the sink cannot apply. Memory holds one chunk (or one record, if larger), never the whole
 * file; only when it finds damage does it read the bytes from there to the end, to tell a
 * torn tail (no intact record follows) from damage in the middle.
 */
export async function readJournal(files: FileLayer, path: string, sink: RecordSink): Promise<JournalScan> {
  const handle = await files.open(path, 'r');
  try {
    const { size } = await handle.stat();
    const head = await readAt(files, handle, 0, Math.min(size, JOURNAL_MAGIC.length));
    if (!head.equals(JOURNAL_MAGIC)) {
      // Not even a header: what follows is damage whatever it is, and parseJournal says which.
      const parsed = parseJournal(await readAt(files, handle, 0, size));
      return { size, records: 0, intactLength: 0, ...(parsed.damage ? { damage: parsed.damage } : {}) };
    }

    let records = 0;
    let offset = JOURNAL_MAGIC.length;
    // File bytes [bufferStart, bufferStart + buffer.length), read ahead of `offset`.
    let buffer = Buffer.alloc(0);
    let bufferStart = offset;
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let stopped: { offset: number; reason: string; replay?: true } | null = null;

    const available = () => bufferStart + buffer.length - offset;
    const ensure = async (bytes: number) => {
      if (available() >= bytes) return;
      const keep = buffer.subarray(offset - bufferStart);
      const more = await readAt(
        files,
        handle,
        bufferStart + buffer.length,
        Math.max(CHUNK_BYTES, bytes - keep.length),
      );
      buffer = Buffer.concat([keep, more]);
      bufferStart = offset;
    };
    /** Hands the batch on; false when the sink stopped at one of its records. */
    const flush = (): boolean => {
      if (batch.length === 0) return true;
      const result = sink(batch);
      if (result.error !== undefined) {
        const failedAt = batch
          .slice(0, result.applied)
          .reduce((at, record) => at + FRAME_HEADER + record.length, offset - batchBytes);
        records += result.applied;
        stopped = {
          offset: failedAt,
          reason: `a record could not be replayed (${describeError(result.error)})`,
          replay: true,
        };
        batch = [];
        batchBytes = 0;
        return false;
      }
      records += batch.length;
      batch = [];
      batchBytes = 0;
      return true;
    };

    while (offset < size) {
      await ensure(FRAME_HEADER);
      if (available() < FRAME_HEADER) {
        stopped = { offset, reason: 'torn record header' };
        break;
      }
      const at = offset - bufferStart;
      const length = buffer.readUInt32LE(at);
      if (length > MAX_RECORD_BYTES) {
        stopped = { offset, reason: 'impossible record length' };
        break;
      }
      // No write is empty: zeros are space the file system allocated but never wrote.
      if (length === 0) {
        stopped = { offset, reason: 'empty record' };
        break;
      }
      if (offset + FRAME_HEADER + length > size) {
        stopped = { offset, reason: 'torn record' };
        break;
      }
      await ensure(FRAME_HEADER + length);
      const start = offset - bufferStart;
      const payload = buffer.subarray(start + FRAME_HEADER, start + FRAME_HEADER + length);
      if (payload.length < length) {
        stopped = { offset, reason: 'torn record' };
        break;
      }
      if (crc32(payload) !== buffer.readUInt32LE(start + 4)) {
        stopped = { offset, reason: 'checksum mismatch' };
        break;
      }
      batch.push(payload);
      batchBytes += FRAME_HEADER + length;
      offset += FRAME_HEADER + length;
      if (batchBytes >= CHUNK_BYTES && !flush()) break;
    }
    // Records read before the end (or the damage) that were not handed on yet.
    const unreadable = stopped;
    stopped = null;
    if (flush()) stopped = unreadable;
    if (stopped === null) return { size, records, intactLength: offset };

    const at: { offset: number; reason: string; replay?: true } = stopped;
    const tail = await readAt(files, handle, at.offset, size - at.offset);
    return {
      size,
      records,
      intactLength: at.offset,
      damage: {
        offset: at.offset,
        reason: at.reason,
        bytes: size - at.offset,
        // A record that is intact but cannot be replayed is never a torn append.
        torn: at.replay === undefined && !intactRecordFrom(tail, 1),
      },
    };
  } finally {
    await handle.close();
  }
}
