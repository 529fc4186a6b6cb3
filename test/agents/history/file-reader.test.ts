// The incremental reader over real files: append-only reads from an offset, torn last lines,
// rewritten and shortened files, lines longer than a read chunk, lines left out by their start.
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  fingerprintOf,
  LINE_MAX_BYTES,
  oversizeLine,
  readLines,
  startOffset as startOffsetOf,
  wholeCharacters,
  type FileProgress,
} from '../../../src-main/history/file-reader.js';
import { seededRandom } from '../../../src-main/seeded-random.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'history-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `read` with the file open, as the importer reads it. */
async function opened<T>(path: string, read: (handle: FileHandle) => Promise<T>): Promise<T> {
  const handle = await open(path);
  try {
    return await read(handle);
  } finally {
    await handle.close();
  }
}

function readAll(path: string, offset: number, batchBytes?: number, skip?: Buffer[]) {
  return opened(path, async (handle) => {
    const lines: string[] = [];
    let end = offset;
    let batches = 0;
    for await (const batch of readLines(handle, offset, batchBytes, skip)) {
      lines.push(...batch.lines);
      end = batch.end;
      batches += 1;
    }
    return { lines, end, batches };
  });
}

const startOffset = (path: string, last: FileProgress) =>
  opened(path, (handle) => startOffsetOf(handle, statSync(path).size, last));

async function progress(path: string, offset: number): Promise<FileProgress> {
  return { offset, size: statSync(path).size, fingerprint: await opened(path, fingerprintOf) };
}

describe('readLines and startOffset', () => {
  it('reads complete lines only, then only what was appended', async () => {
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, '{"n":1}\n{"n":2}\n{"n":3');
    const first = await readAll(path, 0);
    expect(first.lines).toEqual(['{"n":1}', '{"n":2}']);
    expect(first.end).toBe(16);
    appendFileSync(path, '}\n{"n":4}\n');
    const from = await startOffset(path, await progress(path, first.end));
    expect(from).toBe(16);
    expect((await readAll(path, from)).lines).toEqual(['{"n":3}', '{"n":4}']);
  });

  it('reads a rewritten or shortened file again from the start', async () => {
    const path = join(dir, 'b.jsonl');
    writeFileSync(path, `${'x'.repeat(2000)}\nsecond\n`);
    const last = await progress(path, statSync(path).size);
    writeFileSync(path, `${'y'.repeat(2000)}\nsecond\nthird\n`);
    expect(await startOffset(path, last)).toBe(0);
    writeFileSync(path, 'short\n');
    expect(await startOffset(path, last)).toBe(0);
    writeFileSync(path, `${'x'.repeat(2000)}\nsecond\nthird\n`);
    expect(await startOffset(path, last)).toBe(last.offset);
  });

  it('keeps a line longer than a read chunk whole, multi-byte characters included, and batches', async () => {
    const path = join(dir, 'c.jsonl');
    const long = 'é'.repeat(1_500_000);
    writeFileSync(path, `a\n${long}\nb\n`);
    const { lines, end, batches } = await readAll(path, 0, 1024);
    expect(lines).toEqual(['a', long, 'b']);
    expect(end).toBe(statSync(path).size);
    expect(batches).toBe(2);
  });

  it('decodes a long line a read at a time as it would all at once, invalid bytes included', async () => {
    const random = seededRandom(23);
    // Characters of 1 to 4 bytes, some cut short, stray continuation bytes, bytes never valid.
    const pieces = ['a', 'é', '€', '😀', '\n'].map((text) => Buffer.from(text));
    const odd = [
      [0xe2, 0x82],
      [0xf0, 0x9f, 0x98],
      [0x80],
      [0xbf, 0x80],
      [0xff],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
    ];
    const parts: Buffer[] = [];
    for (let bytes = 0; bytes < 3.5 * 1024 * 1024;) {
      const part =
        random() < 0.9
          ? pieces[Math.floor(random() * 4)]!
          : Buffer.from(odd[Math.floor(random() * odd.length)]!);
      parts.push(part);
      bytes += part.length;
    }
    const line = Buffer.concat(parts);
    const path = join(dir, 'g.jsonl');
    writeFileSync(path, Buffer.concat([line, Buffer.from('\n')]));
    // Read a MiB at a time, and decoded so: the longest decoding is of one read (and a character).
    const toString = Buffer.prototype.toString;
    let longest = 0;
    Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer['toString']>) {
      longest = Math.max(longest, (args[2] ?? this.length) - (args[1] ?? 0));
      return toString.apply(this, args);
    };
    let read;
    try {
      read = await readAll(path, 0);
    } finally {
      Buffer.prototype.toString = toString;
    }
    expect(read.lines).toEqual([line.toString('utf8')]);
    expect(longest).toBeGreaterThan(1024 * 1024 - 4);
    expect(longest).toBeLessThanOrEqual(1024 * 1024 + 3);
    // Cut anywhere, the pieces decode as the whole does.
    for (let round = 0; round < 2000; round += 1) {
      const start = Math.floor(random() * (line.length - 64));
      const bytes = line.subarray(start, start + 4 + Math.floor(random() * 60));
      let carry = Buffer.alloc(0);
      let text = '';
      for (let at = 0; at < bytes.length;) {
        const next = Math.min(bytes.length, at + 1 + Math.floor(random() * 7));
        const part = Buffer.concat([carry, bytes.subarray(at, next)]);
        const whole = next === bytes.length ? part.length : wholeCharacters(part);
        text += part.toString('utf8', 0, whole);
        carry = part.subarray(whole);
        at = next;
      }
      expect(text).toBe(bytes.toString('utf8'));
    }
  });

  it('replaces a line longer than a session keeps by a line saying so, and reads on', async () => {
    const path = join(dir, 'd.jsonl');
    const huge = LINE_MAX_BYTES + 3 * 1024 * 1024;
    writeFileSync(path, `a\n${'x'.repeat(huge)}\nb\n${'y'.repeat(huge)}`);
    const { lines, end } = await readAll(path, 0);
    expect(lines).toEqual(['a', oversizeLine(huge), 'b']);
    // The long last line has no newline yet: it is read again once it has one.
    expect(end).toBe(2 + huge + 1 + 2);
  });

  it('leaves out, undecoded, the lines that start with a prefix to skip, wherever reads split them', async () => {
    const path = join(dir, 'e.jsonl');
    const skip = [Buffer.from('{"type":"blob",'), Buffer.from('{"type":"shape",')];
    const blob = (size: number) => `{"type":"blob","data":"${'b'.repeat(size)}"}`;
    // The second line starts 10 bytes before the end of the first read (1 MiB): its prefix is
    // split between two reads. Then one longer than a read, one over the longest line kept, a
    // line that only begins like a prefix, and invalid UTF-8 behind a prefix (never decoded).
    const first = `{"n":1,"pad":"${'p'.repeat(1024 * 1024 - 10 - 17)}"}`;
    const huge = LINE_MAX_BYTES + 1024 * 1024;
    const invalid = Buffer.concat([
      Buffer.from('{"type":"shape","x":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const lines = [first, blob(100), blob(2_500_000), '{"n":2}', blob(huge), '{"type":"blobby"}', '{"n":3}'];
    writeFileSync(path, Buffer.concat([Buffer.from(`${lines.join('\n')}\n`), invalid, Buffer.from('\n')]));
    expect(Buffer.byteLength(first) + 1).toBe(1024 * 1024 - 10);
    const read = await readAll(path, 0, undefined, skip);
    expect(read.lines).toEqual([first, '{"n":2}', '{"type":"blobby"}', '{"n":3}']);
    // What was left out still counts as read: the next read starts past it.
    expect(read.end).toBe(statSync(path).size);
    // Without prefixes the same file reads whole, the line over the limit replaced.
    const all = await readAll(path, 0);
    expect(all.lines).toHaveLength(8);
    expect(all.lines[4]).toBe(oversizeLine(Buffer.byteLength(blob(huge))));
    expect(all.lines[7]).toContain('\ufffd');
  });

  it('refuses a prefix to skip by that is empty or too long to compare at a line start', async () => {
    const path = join(dir, 'f.jsonl');
    writeFileSync(path, 'a\n');
    await expect(readAll(path, 0, undefined, [Buffer.alloc(0)])).rejects.toThrow(/1 to 64 bytes/);
    await expect(readAll(path, 0, undefined, [Buffer.alloc(65, 'x')])).rejects.toThrow(/1 to 64 bytes/);
  });
});
