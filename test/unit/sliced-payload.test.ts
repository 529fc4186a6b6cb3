// A message's payload encoded a slice at a time: the same bytes as encoded at once, whatever its
// long strings hold, and no slice longer than SLICE_CHARS encoded between two pauses.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/index.js';
import { seededRandom } from '../../src-main/seeded-random.js';
import { SLICE_CHARS, slicedPayload } from '../../src-main/store/sliced-payload.js';
import { messagePayload } from '../../src-main/store/transcript-format.js';

/** Text of `length` UTF-16 units: code, quotes, backslashes, control characters, emoji, lone halves. */
function oddText(random: () => number, length: number): string {
  const pieces = [
    'const x = "a";\n',
    '\\',
    '\t',
    '\u0001',
    '\u001b[31m',
    'é',
    '€',
    '😀',
    '\ud83d',
    '\ude00',
    '\u2028',
    ' ',
  ];
  const out: string[] = [];
  let size = 0;
  while (size < length) {
    const piece = pieces[Math.floor(random() * pieces.length)]!;
    out.push(piece);
    size += piece.length;
  }
  return out.join('').slice(0, length);
}

function toolOutput(content: string, extra: Record<string, unknown> = {}): Message {
  return {
    type: 'assistant',
    message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content, ...extra }] },
  } as Message;
}

describe('a payload encoded a slice at a time', () => {
  it('is the same bytes as the message encoded at once', async () => {
    const random = seededRandom(7);
    const pause = () => Promise.resolve();
    for (let round = 0; round < 12; round += 1) {
      const length = SLICE_CHARS * (1 + Math.floor(random() * 4)) + Math.floor(random() * 1000) - 500;
      const message = toolOutput(oddText(random, length), {
        stdout: oddText(random, SLICE_CHARS + 1 + Math.floor(random() * 10)),
        short: oddText(random, 100),
      });
      expect((await slicedPayload(message, pause)).equals(messagePayload(message))).toBe(true);
    }
    // A surrogate pair astride every cut: the cut moves before it.
    const pairs = '😀'.repeat(SLICE_CHARS * 2);
    expect((await slicedPayload(toolOutput(pairs), pause)).equals(messagePayload(toolOutput(pairs)))).toBe(
      true,
    );
    const shifted = `x${pairs}`;
    expect(
      (await slicedPayload(toolOutput(shifted), pause)).equals(messagePayload(toolOutput(shifted))),
    ).toBe(true);
    // No long string, or one that holds a placeholder's likeness: encoded at once, the same,
    // and once (a batch with one long line encodes its short messages here too).
    const plain = toolOutput('short', { note: 'sessiondesk-long-string-' });
    const stringify = JSON.stringify;
    let encodings = 0;
    JSON.stringify = ((...args: unknown[]) => {
      encodings += 1;
      return (stringify as (...a: unknown[]) => string)(...args);
    }) as typeof JSON.stringify;
    let sliced: Buffer;
    try {
      sliced = await slicedPayload(plain, pause);
    } finally {
      JSON.stringify = stringify;
    }
    expect(sliced.equals(messagePayload(plain))).toBe(true);
    expect(encodings).toBe(1);
  });

  it('encodes no more than a slice between two pauses', async () => {
    const message = toolOutput('y'.repeat(SLICE_CHARS * 8));
    const stringify = JSON.stringify;
    let longest = 0;
    let sinceTurn = 0;
    JSON.stringify = ((value: unknown, ...rest: unknown[]) => {
      const text = (stringify as (...args: unknown[]) => string)(value, ...rest);
      sinceTurn += text.length;
      longest = Math.max(longest, sinceTurn);
      return text;
    }) as typeof JSON.stringify;
    let pauses = 0;
    let payload: Buffer;
    try {
      payload = await slicedPayload(message, async () => {
        pauses += 1;
        sinceTurn = 0;
      });
    } finally {
      JSON.stringify = stringify;
    }
    expect(payload.equals(messagePayload(message))).toBe(true);
    expect(pauses).toBeGreaterThanOrEqual(8);
    expect(longest).toBeLessThanOrEqual(SLICE_CHARS + 200);
  });
});
