import { randomUUID } from 'node:crypto';
import type { Message } from '../../src-shared/index.js';
import { messagePayload } from './transcript-format.js';

/** A string this long is encoded a slice of this many characters at a time. */
export const SLICE_CHARS = 256 * 1024;

/**
 * `messagePayload(message)`, the same bytes, with `pause` awaited between slices of the
 * message's long strings, so that a tool output of MBs is not encoded in one turn of the event
 * loop (its JSON takes tens of ms on a loaded machine). The message is encoded with each long
 * string replaced by a placeholder, then each string a slice at a time: JSON escapes a string
 * character by character, so its slices' escapes joined are the whole string's, as long as no
 * cut falls inside a surrogate pair (each half alone would be escaped as `\ud83d`).
 */
export async function slicedPayload(message: Message, pause: () => Promise<void>): Promise<Buffer> {
  const long: string[] = [];
  const token = `sessiondesk-long-string-${randomUUID()}-`;
  const skeleton = JSON.stringify(message, (_key, value: unknown) => {
    if (typeof value !== 'string' || value.length <= SLICE_CHARS) return value;
    long.push(value);
    return `${token}${long.length - 1}`;
  });
  // No long string: the skeleton is the message's JSON.
  if (long.length === 0) return Buffer.from(skeleton, 'utf8');
  // A message that holds the token itself (it cannot, short of guessing a random UUID).
  if (skeleton.split(token).length !== long.length + 1) return messagePayload(message);
  const parts: Buffer[] = [];
  let from = 0;
  for (const [i, text] of long.entries()) {
    const placeholder = JSON.stringify(`${token}${i}`);
    const at = skeleton.indexOf(placeholder, from);
    parts.push(Buffer.from(`${skeleton.slice(from, at)}"`, 'utf8'));
    for (let start = 0; start < text.length;) {
      await pause();
      let end = Math.min(text.length, start + SLICE_CHARS);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
      parts.push(Buffer.from(JSON.stringify(text.slice(start, end)).slice(1, -1), 'utf8'));
      start = end;
    }
    parts.push(Buffer.from('"', 'utf8'));
    from = at + placeholder.length;
  }
  parts.push(Buffer.from(skeleton.slice(from), 'utf8'));
  await pause();
  return Buffer.concat(parts);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
