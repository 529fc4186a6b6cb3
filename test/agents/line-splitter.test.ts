import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { splitLines } from '../../src-main/agents/process/line-splitter.js';

async function split(chunks: Buffer[], max: number) {
  const seen: Array<string | { oversize: number }> = [];
  await splitLines(Readable.from(chunks), max, {
    line: (text) => seen.push(text),
    oversize: (bytes) => seen.push({ oversize: bytes }),
  });
  return seen;
}

describe('splitting an agent CLI’s output into lines', () => {
  it('joins lines across chunks, keeps characters split between chunks, and drops \\r', async () => {
    const bytes = Buffer.from('first\r\nsé', 'utf8');
    // "é" is two bytes: the chunk boundary falls inside it.
    const cut = bytes.length - 1;
    expect(
      await split([bytes.subarray(0, cut), bytes.subarray(cut), Buffer.from('cond\nlast')], 100),
    ).toEqual(['first', 'sécond', 'last']);
  });

  it('skips a line longer than the cap, reports its length, and reads on', async () => {
    const long = 'x'.repeat(25);
    expect(
      await split([Buffer.from(`ok\n${long.slice(0, 10)}`), Buffer.from(`${long.slice(10)}\nafter\n`)], 20),
    ).toEqual(['ok', { oversize: 25 }, 'after']);
  });

  it('reports an oversize last line without a newline', async () => {
    expect(await split([Buffer.from('a\n'), Buffer.from('y'.repeat(30))], 20)).toEqual([
      'a',
      { oversize: 30 },
    ]);
  });
});
