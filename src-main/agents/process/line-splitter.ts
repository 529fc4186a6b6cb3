import type { Readable } from 'node:stream';

/**
 * Longest line of an agent CLI's output that is read: as large as the largest message the store
 * keeps (16 MiB), since one line becomes at most one message. A longer line is skipped and
 * reported, rather than held in memory whole.
 */
export const LINE_MAX_BYTES = 16 * 1024 * 1024;

export interface LineHandlers {
  line(text: string): void;
  /** A line longer than the cap, skipped; `bytes` is its length up to its end. */
  oversize(bytes: number): void;
}

/**
 * Splits a stream into lines (`\n`, a trailing `\r` dropped), each decoded as UTF-8 once whole,
 * so a character split across chunks stays whole. Resolves when the stream has ended.
 */
export function splitLines(stream: Readable, maxBytes: number, handlers: LineHandlers): Promise<void> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes of a line being skipped, or -1 when none is. */
  let skipping = -1;

  function emit(piece: Buffer): void {
    const whole = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
    pending = [];
    pendingBytes = 0;
    let text = whole.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    handlers.line(text);
  }

  function take(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline < 0 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (skipping >= 0) {
        skipping += piece.length;
      } else if (pendingBytes + piece.length > maxBytes) {
        skipping = pendingBytes + piece.length;
        pending = [];
        pendingBytes = 0;
      } else if (newline >= 0) {
        emit(piece);
      } else {
        // Copied: the stream may reuse its chunk's memory.
        pending.push(Buffer.from(piece));
        pendingBytes += piece.length;
      }
      if (newline < 0) break;
      if (skipping >= 0) {
        handlers.oversize(skipping);
        skipping = -1;
      }
      start = newline + 1;
    }
  }

  return new Promise((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => take(chunk));
    stream.on('error', reject);
    stream.on('end', () => {
      if (skipping >= 0) handlers.oversize(skipping);
      else if (pendingBytes > 0) emit(Buffer.alloc(0));
      resolve();
    });
  });
}
