import { crc32 } from 'node:zlib';
import type { Message } from '../../src-shared/index.js';

/**
 * A session's transcript on disk: a header, then one frame per message, appended in
 * conversation order and never rewritten:
 *
 *   [u32 payload length][u32 crc32 of payload][f64 created-at, ms since epoch][payload]["\n"]
 *
 * (little-endian). The payload is the message's JSON exactly as the API sends it, so a read
 * copies bytes into the response without parsing them; the newline keeps the file readable
 * with `strings` or `grep`. The database holds how many bytes of the file are committed.
 */
export const TRANSCRIPT_MAGIC = Buffer.from('SDTRNS01', 'ascii');
export const FRAME_HEADER_BYTES = 16;
/** The header and the newline around every payload. */
export const FRAME_OVERHEAD_BYTES = FRAME_HEADER_BYTES + 1;
/** The largest message stored, as JSON bytes; larger ones are refused when they arrive. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * A message's payload: its JSON as UTF-8. A store encodes a message as it appends it, unless
 * given the payload already: a large message's encoding takes tens of ms, and the history
 * importer does it on a turn of the event loop of its own, before the write.
 */
export function messagePayload(message: Message): Buffer {
  return Buffer.from(JSON.stringify(message), 'utf8');
}

/** Every MARK_EVERY-th message's start in the transcript is recorded (transcript_marks). */
export const MARK_EVERY = 64;

/** Where a session's transcript stands: its messages and committed bytes. */
export interface TranscriptExtent {
  messageCount: number;
  bytes: number;
}

/**
 * The bytes that append messages (their JSON payloads, in order) to a transcript standing at
 * `from`, the header first for an empty one; the marks of those that start a stretch of
 * MARK_EVERY; and the transcript's length after them. Either store writes exactly these.
 */
export function frameMessages(
  from: TranscriptExtent,
  messages: Array<{ payload: Buffer; createdAtMs: number }>,
): { bytes: Buffer; marks: Array<{ seq: number; offset: number }>; end: number } {
  const pieces: Buffer[] = from.bytes === 0 ? [TRANSCRIPT_MAGIC] : [];
  const marks: Array<{ seq: number; offset: number }> = [];
  let offset = from.bytes === 0 ? TRANSCRIPT_MAGIC.length : from.bytes;
  messages.forEach(({ payload, createdAtMs }, i) => {
    const seq = from.messageCount + i + 1;
    if ((seq - 1) % MARK_EVERY === 0) marks.push({ seq, offset });
    const frame = encodeFrame(payload, createdAtMs);
    pieces.push(frame);
    offset += frame.length;
  });
  const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
  return { bytes, marks, end: offset };
}

export function encodeFrame(payload: Buffer, createdAtMs: number): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_OVERHEAD_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  frame.writeDoubleLE(createdAtMs, 8);
  payload.copy(frame, FRAME_HEADER_BYTES);
  frame[frame.length - 1] = 0x0a;
  return frame;
}

export interface FrameHeader {
  length: number;
  crc: number;
  createdAtMs: number;
}

export function readFrameHeader(bytes: Buffer, at = 0): FrameHeader {
  return {
    length: bytes.readUInt32LE(at),
    crc: bytes.readUInt32LE(at + 4),
    createdAtMs: bytes.readDoubleLE(at + 8),
  };
}

export class TranscriptDamage extends Error {
  constructor(
    readonly offset: number,
    reason: string,
  ) {
    super(`${reason} at byte ${offset}`);
  }
}

/** Pieces of one frame's payload, in order; `end` marks its last piece. */
export interface PayloadPiece {
  bytes: Buffer;
  /** The frame this piece belongs to, counted from 0 within the read. */
  index: number;
  /** Where that frame starts in the file: a read from here reads this message first. */
  frameStart: number;
  first: boolean;
  end: boolean;
  createdAtMs: number;
}

/**
 * Splits a stream of transcript bytes, starting at a frame boundary, into payload pieces,
 * checking every frame's length, checksum and newline. Payloads are passed on in the
 * pieces they arrive in, so a 16 MiB message is never held whole.
 */
export class FrameReader {
  private header = Buffer.alloc(FRAME_HEADER_BYTES);
  private headerFilled = 0;
  private remaining = -1;
  private current: FrameHeader | null = null;
  private crc = 0;
  private index = -1;
  private frameStart = 0;
  private first = false;
  /** Bytes consumed so far: where the next byte is in the file, less the start offset. */
  consumed = 0;

  constructor(private readonly startOffset: number) {}

  /** Whether the stream ended between two frames. */
  get atBoundary(): boolean {
    return this.current === null && this.headerFilled === 0;
  }

  *push(chunk: Buffer): Generator<PayloadPiece> {
    let at = 0;
    while (at < chunk.length) {
      if (this.current === null) {
        const take = Math.min(FRAME_HEADER_BYTES - this.headerFilled, chunk.length - at);
        chunk.copy(this.header, this.headerFilled, at, at + take);
        this.headerFilled += take;
        at += take;
        this.consumed += take;
        if (this.headerFilled < FRAME_HEADER_BYTES) return;
        this.current = readFrameHeader(this.header);
        this.frameStart = this.position - FRAME_HEADER_BYTES;
        if (this.current.length > MAX_MESSAGE_BYTES) {
          throw new TranscriptDamage(this.position - FRAME_HEADER_BYTES, 'impossible frame length');
        }
        this.remaining = this.current.length;
        this.crc = 0;
        this.index += 1;
        this.first = true;
        if (this.remaining === 0) throw new TranscriptDamage(this.position, 'empty frame');
        continue;
      }
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - at);
        const bytes = chunk.subarray(at, at + take);
        this.crc = crc32(bytes, this.crc);
        this.remaining -= take;
        at += take;
        this.consumed += take;
        if (this.remaining === 0 && this.crc !== this.current.crc) {
          throw new TranscriptDamage(this.position - this.current.length, 'checksum mismatch');
        }
        const piece: PayloadPiece = {
          bytes,
          index: this.index,
          frameStart: this.frameStart,
          first: this.first,
          end: this.remaining === 0,
          createdAtMs: this.current.createdAtMs,
        };
        this.first = false;
        yield piece;
        continue;
      }
      // The newline after the payload.
      if (chunk[at] !== 0x0a) throw new TranscriptDamage(this.position, 'missing frame end');
      at += 1;
      this.consumed += 1;
      this.current = null;
      this.headerFilled = 0;
    }
  }

  private get position(): number {
    return this.startOffset + this.consumed;
  }
}

/**
 * How many bytes the frame starting at `offset` takes, read from its first bytes (`first`, at
 * least its header to say anything); null when no whole frame can start there below `to`, the
 * committed length. What a one-message read checks before it reads the rest of the frame.
 */
export function wholeFrameBytes(first: Buffer, offset: number, to: number): number | null {
  const length = first.length >= FRAME_HEADER_BYTES ? first.readUInt32LE(0) : -1;
  const frameBytes = length + FRAME_OVERHEAD_BYTES;
  return length <= 0 || length > MAX_MESSAGE_BYTES || offset + frameBytes > to ? null : frameBytes;
}

/** The payload of one whole frame read at `offset`, checked as every read checks it. */
export function onePayload(frame: Buffer, offset: number): Buffer {
  const pieces: Buffer[] = [];
  const reader = new FrameReader(offset);
  for (const piece of reader.push(frame)) pieces.push(piece.bytes);
  if (!reader.atBoundary) throw new TranscriptDamage(offset + frame.length, 'frame cut off');
  return pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
}
