// A search hit's piece read from the message's JSON bytes is the piece the index cut from the
// parsed message, for real recorded messages and for long, escaped and multi-byte text: read
// from the start, and read from where the index says the piece starts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messagePiece, messagePieces, pieceAt } from '../../src-main/search/message-piece.js';
import { CHUNK_CHARS, MAX_CHUNKS, chunks, searchableText } from '../../src-main/search/message-text.js';
import { ROOT } from '../helpers/cli.js';

/**
 * Every piece of `message` read each way, and one past the last: from the start of its bytes,
 * cut all at once as the index cuts a large message, and from the bytes between where each
 * piece starts and where it is whole, alone. Returns how many pieces were read that last way.
 */
function expectSamePieces(message: unknown): number {
  const json = Buffer.from(JSON.stringify(message));
  const expected = chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown));
  for (let n = 0; n <= expected.length; n += 1) {
    expect(messagePiece(json, n), `piece ${n} of ${expected.length}`).toBe(expected[n]);
  }
  const all = messagePieces(json);
  expect(all, 'pieces cut in one scan').not.toBeNull();
  expect(all?.pieces).toEqual(expected);
  let placed = 0;
  for (const [n, start] of (all?.starts ?? []).entries()) {
    if (!start) continue;
    const window = json.subarray(start.at, start.until);
    expect(pieceAt(window, start, n, start.until === json.length), `piece ${n} from its start`).toBe(
      expected[n],
    );
    placed += 1;
  }
  return placed;
}

/** Every line of every recorded agent output and history file under `dir`. */
function recordedLines(dir: string): unknown[] {
  const out: unknown[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...recordedLines(path));
    else if (/\.jsonl?$/u.test(name)) {
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        try {
          out.push(JSON.parse(line));
        } catch {
          // Not a JSON line: a recording's comment or a cut-off last line.
        }
      }
    }
  }
  return out;
}

/** A random string of `length` characters drawn from `alphabet`, reproducibly. */
function randomText(seed: number, length: number, alphabet: string[]): string {
  let state = seed;
  let text = '';
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += alphabet[state % alphabet.length];
  }
  return text;
}

const ALPHABET = [
  ...'abcdefghij klmnop',
  ' ',
  '\n',
  '"',
  '\\',
  '\t',
  '\u0001',
  'é',
  '日本',
  '😀',
  '\ud800',
  '</script>',
  '\u2028',
];

describe('a message piece read from the JSON bytes', () => {
  it('is the indexed piece for every recorded message', () => {
    const messages = recordedLines(join(ROOT, 'test', 'fixtures'));
    expect(messages.length).toBeGreaterThan(200);
    for (const message of messages) expectSamePieces(message);
  });

  it('is the indexed piece of long outputs with escapes, multi-byte characters and lone surrogates', () => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const output = randomText(seed, CHUNK_CHARS * (seed % 4) + seed * 977, ALPHABET);
      const message = {
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: output },
            { type: 'text', text: randomText(seed + 100, 300, ALPHABET) },
          ],
        },
      };
      // Every piece is placed: the store's JSON is valid UTF-8 throughout.
      expect(expectSamePieces(message)).toBe(chunks(searchableText(message)).length);
    }
  });

  it('leaves out what only names things, at any depth, and keeps empty strings as parts', () => {
    expectSamePieces({
      type: 'assistant',
      id: 'msg_1',
      message: {
        content: [
          { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'ls', type: 'kept?' } },
          '',
          ['nested', { uuid: 'u', text: '' }],
        ],
      },
      n: 3,
      ok: true,
      none: null,
    });
  });

  it('reads a piece from its start no further than the piece needs', () => {
    // A search hit reads the bytes from where its piece starts to `until` (from the team
    // server's database, over its connection): a piece of plain text is some CHUNK_CHARS bytes,
    // and its read ends within a few bytes past the character that decides where it is cut.
    const log = Array.from({ length: 12_000 }, (_, i) => `step ${i} passed in ${i % 97} ms`).join('\n');
    const json = Buffer.from(JSON.stringify({ type: 'user', message: { content: log } }));
    const all = messagePieces(json);
    const reads = (all?.starts ?? []).slice(0, -1).map((start) => start!.until - start!.at);
    expect(reads.length).toBeGreaterThan(5);
    // Each piece's text, cut at whitespace, with its escaped newlines: about 1.04 bytes a character.
    expect(Math.max(...reads)).toBeLessThan(CHUNK_CHARS * 1.1);
  });

  it('is the last piece whole when a message has more pieces than are indexed', () => {
    const words = randomText(7, CHUNK_CHARS * 4, [...'abcdefgh ']).repeat(MAX_CHUNKS / 4 + 1);
    const json = Buffer.from(JSON.stringify({ type: 'user', message: { content: words } }));
    const expected = chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown));
    expect(expected).toHaveLength(MAX_CHUNKS);
    const all = messagePieces(json);
    expect(all?.pieces).toEqual(expected);
    for (const n of [0, 1, MAX_CHUNKS - 2, MAX_CHUNKS - 1, MAX_CHUNKS]) {
      expect(messagePiece(json, n), `piece ${n}`).toBe(expected[n]);
      const start = all?.starts[n];
      if (n === MAX_CHUNKS - 1) expect(start?.until).toBe(json.length);
      if (start)
        expect(pieceAt(json.subarray(start.at, start.until), start, n, start.until === json.length)).toBe(
          expected[n],
        );
    }
  });

  it('starts a piece inside a character of two halves, at the newline between strings, and past what names things', () => {
    // No whitespace: the pieces are cut at CHUNK_CHARS, here between a surrogate pair's halves.
    const halves = { type: 'user', message: { content: `a${'😀'.repeat(CHUNK_CHARS)}` } };
    expect(chunks(searchableText(halves))[1]?.charCodeAt(0)).toBe(0xde00);
    expect(expectSamePieces(halves)).toBe(3);
    // Only the newlines between strings to cut at: pieces start with one, each string an
    // object's value after a key and a string that only names things.
    const blocks = Array.from({ length: 90 }, (_, i) => ({
      type: 'text',
      id: `b${i}`,
      text: 'x'.repeat(999),
    }));
    const separated = { type: 'assistant', message: { content: blocks }, uuid: 'u1' };
    const pieces = chunks(searchableText(separated));
    expect(pieces[1]?.startsWith('\nxxx')).toBe(true);
    expect(expectSamePieces(separated)).toBe(pieces.length);
  });

  it('declines to cut at once a message whose keys JSON.parse orders otherwise', () => {
    const big = 'word '.repeat(CHUNK_CHARS);
    const indexLike = { type: 'user', message: { content: big, 7: 'seven', 0: 'zero' } };
    expect(messagePieces(Buffer.from(JSON.stringify(indexLike)))).toBeNull();
    const twice = Buffer.from(`{"type":"user","text":"first","text":${JSON.stringify(big)}}`);
    expect(messagePieces(twice)).toBeNull();
    expect(
      messagePieces(Buffer.from(JSON.stringify({ type: 'user', message: { content: big } }))),
    ).not.toBeNull();
  });
});
