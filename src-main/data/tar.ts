/**
 * The tar format (POSIX ustar) that backups are written in, so that any `tar` can list and
 * unpack one: a 512-byte header per file, its bytes padded to 512, and two zero blocks at
 * the end. Only regular files, written and read as streams.
 */
const BLOCK = 512;
/** The largest size an ustar header holds (11 octal digits). */
const MAX_SIZE = 0o77777777777;
const END_OF_ARCHIVE = Buffer.alloc(BLOCK * 2);

export class TarError extends Error {}

function field(header: Buffer, at: number, length: number, value: string): void {
  header.write(value, at, length, 'ascii');
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

/** One file's header. */
export function tarHeader(name: string, size: number, mtimeMs: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new TarError(`${name}: the name is too long for a tar entry`);
  if (size > MAX_SIZE) throw new TarError(`${name}: ${size} bytes is too large for a tar entry`);
  const header = Buffer.alloc(BLOCK);
  field(header, 0, 100, name);
  field(header, 100, 8, octal(0o600, 8));
  field(header, 108, 8, octal(0, 8));
  field(header, 116, 8, octal(0, 8));
  field(header, 124, 12, octal(size, 12));
  field(header, 136, 12, octal(Math.floor(mtimeMs / 1000), 12));
  field(header, 148, 8, '        ');
  header[156] = 0x30; // '0': a regular file
  field(header, 257, 6, 'ustar\0');
  field(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return header;
}

/** Zero bytes that pad a file of `size` bytes to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

export function tarEnd(): Buffer {
  return END_OF_ARCHIVE;
}

function parseHeader(block: Buffer): { name: string; size: number; type: string } | null {
  if (block.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
  const stored = parseInt(block.toString('ascii', 148, 156).replace(/\0.*$/su, '').trim(), 8);
  if (stored !== sum) throw new TarError('a tar header fails its checksum: the archive is damaged');
  const name = block.toString('utf8', 0, 100).replace(/\0.*$/su, '');
  const prefix = block.toString('utf8', 345, 500).replace(/\0.*$/su, '');
  const size = parseInt(block.toString('ascii', 124, 136).replace(/\0.*$/su, '').trim() || '0', 8);
  if (!Number.isSafeInteger(size) || size < 0)
    throw new TarError(`${name}: an impossible size in its header`);
  return { name: prefix ? `${prefix}/${name}` : name, size, type: String.fromCharCode(block[156] ?? 0) };
}

export interface TarEntryHandler {
  /** A file begins; the returned function receives its bytes in pieces. */
  file(name: string, size: number): (piece: Buffer) => Promise<void> | void;
}

/**
 * Reads a tar stream, handing each regular file's bytes on in pieces as they arrive;
 * resolves with the files seen once the end-of-archive blocks are read. An archive that
 * stops before them is cut short, which is an error.
 */
export async function readTar(
  input: AsyncIterable<Buffer>,
  handler: TarEntryHandler,
): Promise<Array<{ name: string; size: number }>> {
  const seen: Array<{ name: string; size: number }> = [];
  let header = Buffer.alloc(0);
  let remaining = 0;
  let padding = 0;
  let sink: ((piece: Buffer) => Promise<void> | void) | null = null;
  let ended = false;
  for await (const raw of input) {
    let chunk = raw;
    while (chunk.length > 0 && !ended) {
      if (remaining > 0) {
        const piece = chunk.subarray(0, Math.min(remaining, chunk.length));
        remaining -= piece.length;
        chunk = chunk.subarray(piece.length);
        if (sink) await sink(piece);
        continue;
      }
      if (padding > 0) {
        const skip = Math.min(padding, chunk.length);
        padding -= skip;
        chunk = chunk.subarray(skip);
        continue;
      }
      const take = Math.min(BLOCK - header.length, chunk.length);
      header = Buffer.concat([header, chunk.subarray(0, take)]);
      chunk = chunk.subarray(take);
      if (header.length < BLOCK) continue;
      const parsed = parseHeader(header);
      header = Buffer.alloc(0);
      if (!parsed) {
        ended = true;
        break;
      }
      remaining = parsed.size;
      padding = (BLOCK - (parsed.size % BLOCK)) % BLOCK;
      // Directories, links and extended headers carry nothing a backup needs.
      sink = parsed.type === '0' || parsed.type === '\0' ? handler.file(parsed.name, parsed.size) : null;
      if (sink) seen.push({ name: parsed.name, size: parsed.size });
    }
  }
  if (!ended || remaining > 0)
    throw new TarError('the archive is cut short: it ends before its last file does');
  return seen;
}
