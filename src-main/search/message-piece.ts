import { CHUNK_CHARS, MAX_CHUNKS, STRUCTURAL_KEYS } from './message-text.js';

/**
 * One piece of a message's searchable text, read from its JSON bytes without parsing all of
 * them: `messagePiece(json, n)` is `chunks(searchableText(JSON.parse(json)))[n]`, but the
 * strings are decoded in order, a long one in segments, and the scan stops once piece `n` is
 * whole. A search hit in a 2 MB tool output then decodes the first 32K characters it shows,
 * not the whole message (a JSON.parse of such a message took tens of milliseconds).
 *
 * It reads the JSON as the store wrote it (`JSON.stringify` of the message). One thing of
 * JSON.parse it does not copy: an object's keys that look like array indexes come first in
 * JSON.parse's order and in file order here. The caller checks that the piece holds the match
 * and falls back to the full parse when it does not.
 */
export function messagePiece(json: Buffer, n: number): string | undefined {
  const text = new PieceText(n);
  const end = json.length;
  /** Per open container: whether it is an object, and its current key. */
  const objects: boolean[] = [];
  const keys: (string | null)[] = [];
  let expectKey = false;
  let at = 0;
  while (at < end) {
    const byte = json[at]!;
    if (byte === QUOTE) {
      const inObject = objects.at(-1) === true;
      const key = inObject ? (keys.at(-1) ?? null) : null;
      if (inObject && expectKey) {
        const close = closingQuote(json, at + 1, end);
        keys[keys.length - 1] = decode(json, at + 1, close);
        expectKey = false;
        at = close + 1;
      } else if (key !== null && STRUCTURAL_KEYS.has(key)) {
        at = closingQuote(json, at + 1, end) + 1;
      } else {
        // A long string is decoded a segment at a time, each as long as the piece still needs.
        text.startPart();
        for (let from = at + 1; ;) {
          // Most text is a byte a character; where it is more, the next segment reads on.
          const limit = Math.min(end, from + text.charsWanted() * 2 + 64);
          const close = closingQuote(json, from, limit);
          const to = close === -1 ? segmentEnd(json, from, limit) : close;
          text.append(decode(json, from, to));
          if (text.piece !== undefined) return text.piece;
          if (close !== -1) {
            at = close + 1;
            break;
          }
          from = to;
        }
      }
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      objects.push(byte === OPEN_BRACE);
      keys.push(null);
      expectKey = byte === OPEN_BRACE;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      objects.pop();
      keys.pop();
    } else if (byte === COMMA) {
      expectKey = objects.at(-1) === true;
    }
    at += 1;
  }
  return text.finish();
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The longest escape, `\uXXXX`. */
const LONGEST_ESCAPE = 6;

/**
 * The index of the quote that closes the string whose content goes on at `from`, if it is
 * before `limit`; else -1. (At the end of the bytes, a string that never closes is an error.)
 */
function closingQuote(json: Buffer, from: number, limit: number): number {
  // A loop over the bytes: code is dense with escaped quotes, and a call to Buffer#indexOf
  // for each cost more than reading the bytes here.
  for (let at = from; at < limit; at += 1) {
    const byte = json[at];
    if (byte === BACKSLASH) at += 1;
    else if (byte === QUOTE) return at;
  }
  if (limit >= json.length) throw new SyntaxError('unterminated string in a stored message');
  return -1;
}

/**
 * Where a segment of a string's content from `from` may end, at or before `limit` (inside the
 * string): never inside an escape or a UTF-8 sequence, and never empty.
 */
function segmentEnd(json: Buffer, from: number, limit: number): number {
  let cut = limit;
  // Not before a UTF-8 continuation byte (10xxxxxx).
  while (cut > from && (json[cut]! & 0xc0) === 0x80) cut -= 1;
  // Not inside an escape: `\uXXXX` is the longest.
  for (let back = 1; back < LONGEST_ESCAPE && cut - back >= from; back += 1) {
    const start = cut - back;
    if (json[start] !== BACKSLASH) continue;
    let before = 0;
    while (json[start - 1 - before] === BACKSLASH) before += 1;
    if (before % 2 === 1) continue;
    const length = json[start + 1] === 0x75 /* u */ ? LONGEST_ESCAPE : 2;
    if (start + length > cut) cut = start;
    break;
  }
  return cut > from ? cut : limit;
}

/** The characters of the string content between `from` and `to`, as JSON.parse gives them. */
function decode(json: Buffer, from: number, to: number): string {
  const raw = json.toString('utf8', from, to);
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/** The text as it grows, and the pieces cut from it as `chunks` cuts them, until piece `n`. */
class PieceText {
  private text = '';
  private parts = 0;
  /** Where the next piece starts, and which piece it is. */
  private start = 0;
  private index = 0;
  piece: string | undefined;

  constructor(private readonly n: number) {}

  startPart(): void {
    if (this.parts > 0) this.text += '\n';
    this.parts += 1;
  }

  /** Characters still needed before the next piece can be cut. */
  charsWanted(): number {
    return Math.max(1, this.start + CHUNK_CHARS + 1 - this.text.length);
  }

  append(chars: string): void {
    this.text += chars;
    // A piece is cut once the text goes past its longest end, as `chunks` cuts a longer text;
    // the last piece takes the rest of the text, so it waits for the end.
    while (this.index < MAX_CHUNKS - 1 && this.text.length > this.start + CHUNK_CHARS) {
      const end = this.cutAt();
      if (this.index === this.n) {
        this.piece = this.text.slice(this.start, end);
        return;
      }
      // What comes before the next piece is never looked at again.
      this.text = this.text.slice(end);
      this.start = 0;
      this.index += 1;
    }
  }

  /** At the end of the message: piece `n`, if the text has one. */
  finish(): string | undefined {
    while (this.start < this.text.length) {
      const last = this.index >= MAX_CHUNKS - 1;
      const end = last ? this.text.length : this.cutAt();
      if (this.index === this.n) return this.text.slice(this.start, end);
      this.start = end;
      this.index += 1;
    }
    return undefined;
  }

  /** As in `chunks`: at whitespace near CHUNK_CHARS, so words stay whole. */
  private cutAt(): number {
    let end = Math.min(this.text.length, this.start + CHUNK_CHARS);
    if (end < this.text.length) {
      const cut = Math.max(this.text.lastIndexOf(' ', end), this.text.lastIndexOf('\n', end));
      if (cut > this.start + CHUNK_CHARS / 2) end = cut;
    }
    return end;
  }
}
