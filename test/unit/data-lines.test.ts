import { describe, expect, it } from 'vitest';
import { LineTooLong, readLines } from '../../src-main/data/lines.js';

async function collect(chunks: string[], maxBytes?: number): Promise<Array<string | number>> {
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk, 'utf8');
  }
  const lines: Array<string | number> = [];
  for await (const line of readLines(source(), maxBytes)) {
    lines.push(line instanceof LineTooLong ? line.bytes : line);
  }
  return lines;
}

describe('readLines', () => {
  it('splits on newlines across chunks, drops a CR before them, keeps a last line without one', async () => {
    expect(await collect(['a', 'b\r\nc', 'd\n', '\n', 'é', 'tail'])).toEqual(['ab', 'cd', '', 'étail']);
    expect(await collect(['one\n'])).toEqual(['one']);
    expect(await collect([])).toEqual([]);
  });

  it('keeps a character split between chunks whole', async () => {
    const bytes = Buffer.from('😀\n', 'utf8');
    async function* source() {
      yield bytes.subarray(0, 2);
      yield bytes.subarray(2);
    }
    const lines: unknown[] = [];
    for await (const line of readLines(source())) lines.push(line);
    expect(lines).toEqual(['😀']);
  });

  it('drops a line longer than the limit as it streams by, and reports its length', async () => {
    expect(await collect(['short\n', 'x'.repeat(6), 'y'.repeat(6), '\nnext\n', 'z'.repeat(20)], 10)).toEqual([
      'short',
      12,
      'next',
      20,
    ]);
  });
});
