import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';

/** How much of a file's start its fingerprint covers: a rewritten file changes it. */
export const FINGERPRINT_BYTES = 1024;
/** Bytes read at a time: memory stays bounded whatever the file's size. */
const CHUNK_BYTES = 1 << 20;

/** Where an earlier read of a file stopped. */
export interface FileProgress {
  offset: number;
  size: number;
  fingerprint: string;
}

/** The fingerprint of a file's first KB (fewer bytes when it is shorter). */
export async function fingerprintOf(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(FINGERPRINT_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, FINGERPRINT_BYTES, 0);
    return createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('hex').slice(0, 32);
  } finally {
    await handle.close();
  }
}

/**
 * Where to read `path` from, given the last read's progress: that offset while the file only
 * grew (an append-only session file), 0 when it was rewritten or shortened (smaller than the
 * offset, or its first KB changed, compared once the file holds the KB the last read saw).
 */
export async function startOffset(path: string, last: FileProgress | undefined): Promise<number> {
  if (!last) return 0;
  const { size } = await stat(path);
  if (size < last.offset || size < last.size) return 0;
  if (last.size >= FINGERPRINT_BYTES || size < FINGERPRINT_BYTES) {
    if ((await fingerprintOf(path)) !== last.fingerprint) return 0;
  }
  return last.offset;
}

/**
 * The complete lines of `path` from byte `offset`, in batches of about `batchBytes`, each with
 * the offset just past its last line. A last line without its newline is left for a later read
 * (the CLI may be writing it). Lines are decoded as UTF-8 one by one, never split inside.
 */
export async function* readLines(
  path: string,
  offset: number,
  batchBytes = 4 * CHUNK_BYTES,
): AsyncGenerator<{ lines: string[]; end: number }> {
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let position = offset;
    let pending: Buffer[] = [];
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
        const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        lines.push(line.toString('utf8'));
        batchSize += line.length + 1;
        lineStart = position + newline + 1;
        from = newline + 1;
        if (batchSize >= batchBytes) {
          yield { lines, end: lineStart };
          lines = [];
          batchSize = 0;
        }
      }
      if (from < bytesRead) pending.push(Buffer.from(chunk.subarray(from, bytesRead)));
      position += bytesRead;
    }
    if (lines.length > 0) yield { lines, end: lineStart };
  } finally {
    await handle.close();
  }
}
