import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { MAX_MESSAGE_BYTES } from '../store/transcript-format.js';

/** How much of a file's start its fingerprint covers: a rewritten file changes it. */
export const FINGERPRINT_BYTES = 1024;
/** Bytes read at a time: memory stays bounded whatever the file's size. */
const CHUNK_BYTES = 1 << 20;
/**
 * The longest line kept: a message larger than a session stores could not be kept anyway, and
 * a file without newlines must not fill the memory. A longer line is replaced by a line saying so.
 */
export const LINE_MAX_BYTES = MAX_MESSAGE_BYTES;

/** Where an earlier read of a file stopped. */
export interface FileProgress {
  offset: number;
  size: number;
  fingerprint: string;
}

/** The fingerprint of a file's first KB (fewer bytes when it is shorter). */
export async function fingerprintOf(handle: FileHandle): Promise<string> {
  const buffer = Buffer.alloc(FINGERPRINT_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, FINGERPRINT_BYTES, 0);
  return createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('hex').slice(0, 32);
}

/**
 * Where to read a file of `size` bytes from, given the last read's progress: that offset while
 * the file only grew (an append-only session file), 0 when it was rewritten or shortened
 * (smaller than the offset, or its first KB changed, compared once the file holds the KB the
 * last read saw).
 */
export async function startOffset(
  handle: FileHandle,
  size: number,
  last: FileProgress | undefined,
): Promise<number> {
  if (!last) return 0;
  if (size < last.offset || size < last.size) return 0;
  if (last.size >= FINGERPRINT_BYTES || size < FINGERPRINT_BYTES) {
    if ((await fingerprintOf(handle)) !== last.fingerprint) return 0;
  }
  return last.offset;
}

/** What stands in for a line longer than LINE_MAX_BYTES: not JSON, so it is kept as a notice. */
export function oversizeLine(bytes: number): string {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `A line of more than ${mib(bytes)} was left out: lines are read up to ${mib(LINE_MAX_BYTES)}.`;
}

/** The longest prefix `readLines` can be asked to skip lines by. */
export const SKIP_PREFIX_MAX_BYTES = 64;
const NO_BYTES = Buffer.alloc(0);

/**
 * The complete lines of an open file from byte `offset`, in batches of about `batchBytes`, each
 * with the offset just past its last line. A last line without its newline is left for a later
 * read (the CLI may be writing it). Lines are decoded as UTF-8 one by one, never split inside
 * (invalid bytes become U+FFFD); a line longer than a read is decoded a read at a time, so no
 * turn of the event loop decodes MBs at once. One longer than LINE_MAX_BYTES is replaced by
 * oversizeLine. A line that starts with one of `skip`'s prefixes (at most SKIP_PREFIX_MAX_BYTES
 * each) is left out undecoded: the format's parser would drop it, and decoding it costs as much
 * as its size.
 */
export async function* readLines(
  handle: FileHandle,
  offset: number,
  batchBytes = 4 * CHUNK_BYTES,
  skip: readonly Buffer[] = [],
): AsyncGenerator<{ lines: string[]; end: number }> {
  if (skip.some((prefix) => prefix.length === 0 || prefix.length > SKIP_PREFIX_MAX_BYTES))
    throw new Error(`a prefix to skip lines by must be 1 to ${SKIP_PREFIX_MAX_BYTES} bytes`);
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let position = offset;
  /** The current line so far, while it spans reads: its text, decoded a read at a time... */
  let texts: string[] = [];
  /** ...but for a character whose bytes the next read completes... */
  let carry = NO_BYTES;
  /** ...and how many bytes it is. */
  let pendingBytes = 0;
  /** Bytes of the current line dropped for being over the limit. */
  let dropped = 0;
  /** The first bytes of the current line, while it spans reads: what `skip` is compared with. */
  let head = NO_BYTES;
  const noteHead = (bytes: Buffer) => {
    if (skip.length > 0 && head.length < SKIP_PREFIX_MAX_BYTES)
      head = Buffer.concat([head, bytes.subarray(0, SKIP_PREFIX_MAX_BYTES - head.length)]);
  };
  const skipped = (first: Buffer) =>
    skip.some((prefix) => first.length >= prefix.length && first.subarray(0, prefix.length).equals(prefix));
  /** The bytes after the carried ones: a piece of the current line. */
  const withCarry = (piece: Buffer) => (carry.length > 0 ? Buffer.concat([carry, piece]) : piece);
  let lines: string[] = [];
  let lineStart = offset;
  let batchSize = 0;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf(10, from);
      if (newline === -1 || newline >= bytesRead) break;
      const piece = chunk.subarray(from, newline);
      const spanned = pendingBytes > 0 || dropped > 0;
      if (spanned) noteHead(piece);
      if (skipped(spanned ? head : piece)) {
        // Left out: its bytes count toward the batch as if it had been read.
      } else if (dropped > 0 || pendingBytes + piece.length > LINE_MAX_BYTES) {
        lines.push(oversizeLine(dropped + pendingBytes + piece.length));
      } else if (pendingBytes > 0) {
        texts.push(withCarry(piece).toString('utf8'));
        lines.push(texts.join(''));
      } else {
        lines.push(piece.toString('utf8'));
      }
      batchSize += Math.min(dropped + pendingBytes + piece.length, LINE_MAX_BYTES) + 1;
      texts = [];
      carry = NO_BYTES;
      pendingBytes = 0;
      dropped = 0;
      head = NO_BYTES;
      lineStart = position + newline + 1;
      from = newline + 1;
      if (batchSize >= batchBytes) {
        yield { lines, end: lineStart };
        lines = [];
        batchSize = 0;
      }
    }
    if (from < bytesRead) {
      const rest = chunk.subarray(from, bytesRead);
      noteHead(rest);
      if (dropped > 0 || skipped(head) || pendingBytes + rest.length > LINE_MAX_BYTES) {
        // Over the limit or left out: only its length is kept, until its newline comes.
        dropped += pendingBytes + rest.length;
        texts = [];
        carry = NO_BYTES;
        pendingBytes = 0;
      } else {
        const bytes = withCarry(rest);
        const whole = wholeCharacters(bytes);
        texts.push(bytes.toString('utf8', 0, whole));
        // A copy: the chunk is read into again.
        carry = Buffer.from(bytes.subarray(whole));
        pendingBytes += rest.length;
      }
    }
    position += bytesRead;
  }
  if (lines.length > 0) yield { lines, end: lineStart };
}

/**
 * How many of `bytes` to decode now, so that decoding the rest with the bytes that follow gives
 * what decoding them all at once would: all but a character begun in the last three bytes and
 * not complete. (A decoder meeting a byte that starts a character starts afresh there, whatever
 * came before, so cutting before one changes nothing.)
 */
export function wholeCharacters(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 3); i -= 1) {
    const byte = bytes[i] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return bytes.length - i < length ? i : bytes.length;
  }
  return bytes.length;
}
