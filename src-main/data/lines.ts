/**
 * The lines of an export as they arrive, for `importSessions`. Unlike `readline`, a line
 * never grows without bound: one longer than `maxBytes` (a session too large to be one
 * write, or input that is not an export at all) is dropped as it streams by and reported.
 */
export const MAX_LINE_BYTES = 256 * 2 ** 20;

export class LineTooLong {
  constructor(readonly bytes: number) {}
}

function decode(parts: Buffer[], length: number): string {
  const text = Buffer.concat(parts, length).toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

export async function* readLines(
  input: AsyncIterable<Buffer | string>,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<string | LineTooLong> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let dropped: number | null = null;
  for await (const raw of input) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (dropped !== null) {
        dropped += piece.length;
      } else if (pendingBytes + piece.length > maxBytes) {
        dropped = pendingBytes + piece.length;
        pending = [];
        pendingBytes = 0;
      } else if (piece.length > 0) {
        pending.push(piece);
        pendingBytes += piece.length;
      }
      if (newline === -1) break;
      yield dropped === null ? decode(pending, pendingBytes) : new LineTooLong(dropped);
      pending = [];
      pendingBytes = 0;
      dropped = null;
      start = newline + 1;
    }
  }
  if (dropped !== null) yield new LineTooLong(dropped);
  else if (pendingBytes > 0) yield decode(pending, pendingBytes);
}
