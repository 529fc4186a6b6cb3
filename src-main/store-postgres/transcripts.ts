import type { Sql } from 'postgres';
import { TranscriptDamagedError } from '../store/errors.js';
import type { Repos } from '../store/storage.js';
import {
  FRAME_HEADER_BYTES,
  FRAME_OVERHEAD_BYTES,
  FrameReader,
  MAX_MESSAGE_BYTES,
  onePayload,
  TranscriptDamage,
  wholeFrameBytes,
  type PayloadPiece,
} from '../store/transcript-format.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import type { Queryable } from './rows.js';

/**
 * How much of a transcript one query fetches while reading it through: a page of a few
 * messages needs the first window only, a whole session grows the window to the largest.
 */
const FIRST_WINDOW_BYTES = 256 * 1024;
const WINDOW_BYTES = 4 * 1024 * 1024;
/** A frame's first fetch: most messages fit, so one query gets the whole frame. */
const FRAME_FIRST_READ_BYTES = 16 * 1024;

/**
 * Transcripts kept in `transcript_chunks` (see the README), read by byte offset as the sql.js
 * store reads its files, through the same FrameReader and checksums. Each query fetches only
 * the bytes asked for (`substring` of the rows that overlap them), a window at a time, so a
 * 165 MB session is never held whole. A row and its chunks commit together: a row read in a
 * snapshot counts only bytes that are there.
 */
export function postgresTranscripts(sql: Sql, reposOf: (sql: Queryable) => Repos): TranscriptSource {
  const where = (sessionId: string) => `transcript of session ${sessionId}`;

  /** Bytes [start, end) of a transcript, as far as they are there without a gap. */
  async function readUpTo(sessionId: string, start: number, end: number): Promise<Buffer> {
    if (end <= start) return Buffer.alloc(0);
    const rows = await sql<Array<{ start_offset: number; part: Buffer }>>`
      SELECT start_offset,
        substring(bytes FROM greatest(${start} - start_offset, 0)::int + 1
          FOR (least(start_offset + length(bytes), ${end}) - greatest(start_offset, ${start}))::int) AS part
      FROM transcript_chunks
      WHERE session_id = ${sessionId} AND start_offset < ${end}
        AND start_offset >= coalesce((SELECT max(start_offset) FROM transcript_chunks
          WHERE session_id = ${sessionId} AND start_offset <= ${start}), 0)
      ORDER BY start_offset`;
    const parts: Buffer[] = [];
    let at = start;
    for (const row of rows) {
      if (Math.max(row.start_offset, start) !== at || row.part.length === 0) break;
      parts.push(row.part);
      at += row.part.length;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Bytes [start, end) of a transcript, all of them, or TranscriptDamagedError. */
  async function readRange(sessionId: string, start: number, end: number): Promise<Buffer> {
    const bytes = await readUpTo(sessionId, start, end);
    if (bytes.length !== Math.max(0, end - start)) {
      throw new TranscriptDamagedError(
        `The ${where(sessionId)} ends at byte ${start + bytes.length}; ${end} bytes are committed.`,
      );
    }
    return bytes;
  }

  function damaged(sessionId: string, err: unknown): unknown {
    return err instanceof TranscriptDamage
      ? new TranscriptDamagedError(`The ${where(sessionId)}: ${err.message}`)
      : err;
  }

  return {
    settled: (_sessionId, read) =>
      sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => read(reposOf(tx))) as ReturnType<
        typeof read
      >,

    async *readPayloads(sessionId, from, to): AsyncGenerator<PayloadPiece> {
      if (to <= from) return;
      const reader = new FrameReader(from);
      let window = FIRST_WINDOW_BYTES;
      for (let position = from; position < to; window = Math.min(WINDOW_BYTES, window * 2)) {
        // What is there before a gap is read; the gap itself is the error.
        const bytes = await readUpTo(sessionId, position, Math.min(to, position + window));
        if (bytes.length === 0) {
          throw new TranscriptDamagedError(
            `The ${where(sessionId)} ends at byte ${position}; ${to} bytes are committed.`,
          );
        }
        position += bytes.length;
        try {
          yield* reader.push(bytes);
        } catch (err) {
          throw damaged(sessionId, err);
        }
      }
      if (!reader.atBoundary) {
        throw new TranscriptDamagedError(`The ${where(sessionId)}: a frame is cut off at byte ${to}`);
      }
    },

    async readFrame(sessionId, offset, to) {
      const first = await readRange(sessionId, offset, Math.min(to, offset + FRAME_FIRST_READ_BYTES));
      const frameBytes = wholeFrameBytes(first, offset, to);
      if (frameBytes === null) {
        throw new TranscriptDamagedError(`The ${where(sessionId)}: no whole frame at byte ${offset}`);
      }
      const frame =
        first.length >= frameBytes
          ? first.subarray(0, frameBytes)
          : Buffer.concat([first, await readRange(sessionId, offset + first.length, offset + frameBytes)]);
      try {
        return onePayload(frame, offset);
      } catch (err) {
        throw damaged(sessionId, err);
      }
    },

    async readPayloadRange(sessionId, offset, to, from, until) {
      const header = await readRange(sessionId, offset, Math.min(to, offset + FRAME_HEADER_BYTES)).catch(() =>
        Buffer.alloc(0),
      );
      const payloadBytes = header.length === FRAME_HEADER_BYTES ? header.readUInt32LE(0) : -1;
      if (
        payloadBytes <= 0 ||
        payloadBytes > MAX_MESSAGE_BYTES ||
        offset + payloadBytes + FRAME_OVERHEAD_BYTES > to ||
        from < 0 ||
        until > payloadBytes ||
        until < from
      ) {
        throw new TranscriptDamagedError(
          `The ${where(sessionId)}: no payload bytes ${from} to ${until} in a frame at byte ${offset}`,
        );
      }
      const start = offset + FRAME_HEADER_BYTES;
      return { bytes: await readRange(sessionId, start + from, start + until), payloadBytes };
    },

    async *readRaw(sessionId, length) {
      for (let position = 0; position < length; position += WINDOW_BYTES) {
        yield await readRange(sessionId, position, Math.min(length, position + WINDOW_BYTES));
      }
    },
  };
}
