// A search hit's piece read from the message's JSON bytes is the piece the index cut from the
// parsed message, for real recorded messages and for long, escaped and multi-byte text.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messagePiece } from '../../src-main/search/message-piece.js';
import { CHUNK_CHARS, MAX_CHUNKS, chunks, searchableText } from '../../src-main/search/message-text.js';
import { ROOT } from '../helpers/cli.js';

/** Every piece of `message` both ways, and one past the last. */
function expectSamePieces(message: unknown) {
  const json = Buffer.from(JSON.stringify(message));
  const expected = chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown));
  for (let n = 0; n <= expected.length; n += 1) {
    expect(messagePiece(json, n), `piece ${n} of ${expected.length}`).toBe(expected[n]);
  }
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
      expectSamePieces({
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: output },
            { type: 'text', text: randomText(seed + 100, 300, ALPHABET) },
          ],
        },
      });
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

  it('is the last piece whole when a message has more pieces than are indexed', () => {
    const words = randomText(7, CHUNK_CHARS * 4, [...'abcdefgh ']).repeat(MAX_CHUNKS / 4 + 1);
    const json = Buffer.from(JSON.stringify({ type: 'user', message: { content: words } }));
    const expected = chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown));
    expect(expected).toHaveLength(MAX_CHUNKS);
    for (const n of [0, 1, MAX_CHUNKS - 2, MAX_CHUNKS - 1, MAX_CHUNKS]) {
      expect(messagePiece(json, n), `piece ${n}`).toBe(expected[n]);
    }
  });
});
