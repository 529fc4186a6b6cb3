import { chunks, CHUNK_CHARS, MAX_CHUNKS, searchableText, STRUCTURAL_KEYS } from './message-text.js';

/**
 * From this size a message's piece is read from its bytes rather than a whole parse (and the
 * index keeps where its pieces start). Below it JSON.parse is faster: V8 parses small strings
 * natively, while strings over about 128 KB go to a space of their own and cost milliseconds.
 */
export const PIECE_READ_MIN_BYTES = 128 * 1024;

/**
 * A message's searchable text read from its JSON bytes without parsing all of them:
 * `messagePiece(json, n)` is `chunks(searchableText(JSON.parse(json)))[n]`, but the strings are
 * decoded in order, a long one in segments, and the scan stops once piece `n` is whole. A
 * search hit in a 2 MB tool output then decodes the text up to its piece, not the whole message
 * (a JSON.parse of such a message took tens of milliseconds).
 *
 * The index goes further for large messages: `messagePieces` cuts all the pieces in one scan
 * and says where each starts in the bytes (a PieceStart), which the index keeps; `pieceAt` then
 * makes the piece from those bytes alone, so a hit in the last piece of a 4 MB output reads and
 * decodes some 40 KB of it.
 *
 * It reads the JSON as the store wrote it (`JSON.stringify` of the message). One thing of
 * JSON.parse it does not copy: an object's keys that look like array indexes come first in
 * JSON.parse's order and in file order here. `messagePieces` declines such a message (and one
 * with a key twice); for `messagePiece` the caller checks that the piece holds the match and
 * falls back to the full parse when it does not.
 */
export function messagePiece(json: Buffer, n: number): string | undefined {
  return new TextWalker(json, json.length, true, new PieceText(n)).walk(0, '', false);
}

/** Where a piece's text starts in its message's JSON bytes: enough for a read to start there. */
export interface PieceStart {
  /**
   * The byte the piece is read from: inside a string's content (`inString`), or the opening
   * quote of the string whose separating newline begins the piece.
   */
  at: number;
  /** The piece is whole within the bytes before this one (the message's length for its last). */
  until: number;
  /** Characters decoded from `at` that end the piece before (half of a surrogate pair). */
  skip: number;
  /** The containers open at `at`, outermost first, as their opening brackets. */
  stack: string;
  inString: boolean;
}

/**
 * Every piece of the message, as `chunks(searchableText(JSON.parse(json)))` cuts them, each with
 * where it starts (null for a piece whose start could not be placed: invalid UTF-8 near it).
 * Null when JSON.parse would order the keys otherwise (an index-like key, a key twice).
 */
export function messagePieces(json: Buffer): { pieces: string[]; starts: Array<PieceStart | null> } | null {
  const text = new PieceText(Infinity, 0, 0, 0, new StartFinder(json));
  const walker = new TextWalker(json, json.length, true, text);
  walker.checkKeys = true;
  walker.walk(0, '', false);
  if (walker.keysDiffer) return null;
  const finder = text.finder as StartFinder;
  return { pieces: finder.pieces, starts: finder.pieceStarts };
}

/**
 * A message's pieces as they are indexed. A large one is cut in one scan of its bytes, which
 * also says where each piece starts there, for a hit to read that piece alone (and is quicker
 * than JSON.parse at that size); the rest are parsed, as is a large one whose keys JSON.parse
 * would order otherwise.
 */
export function piecesOf(json: Buffer): { pieces: string[]; starts: Array<PieceStart | null> | null } {
  const scanned = json.length > PIECE_READ_MIN_BYTES ? messagePieces(json) : null;
  return (
    scanned ?? { pieces: chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown)), starts: null }
  );
}

/**
 * Piece `n` made from `bytes`, the message's bytes from `start.at` to `start.until`; `whole`
 * when those reach the message's end. Undefined when they do not make the piece (an index
 * that does not match the message).
 */
export function pieceAt(bytes: Buffer, start: PieceStart, n: number, whole: boolean): string | undefined {
  if (n < 0 || n >= MAX_CHUNKS) return undefined;
  const text = new PieceText(n, n, n > 0 ? 1 : 0, start.skip);
  try {
    return new TextWalker(bytes, bytes.length, whole, text).walk(0, start.stack, start.inString);
  } catch {
    return undefined;
  }
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

/** A key JSON.parse puts first, in numeric order: an array index. */
const INDEX_LIKE = /^(?:0|[1-9]\d*)$/u;

/** The walk over a message's JSON bytes that hands the text of its strings to a PieceText. */
class TextWalker {
  /** Whether to note keys that JSON.parse would order otherwise (see `keysDiffer`). */
  checkKeys = false;
  keysDiffer = false;
  /** Per open object, when keys are checked: the keys seen so far. */
  private readonly seenKeys: Array<Set<string> | null> = [];

  constructor(
    private readonly json: Buffer,
    /** Where the bytes end; `whole`: the message ends there too (else the walk may stop short). */
    private readonly end: number,
    private readonly whole: boolean,
    private readonly text: PieceText,
  ) {}

  /** Walks from `at`, inside the containers `stack` (and inside a string, `inString`). */
  walk(at: number, stack: string, inString: boolean): string | undefined {
    const { json, end, text } = this;
    /** Per open container, its current key (for an object). */
    const keys: (string | null)[] = Array.from(stack, () => null);
    let expectKey = false;
    if (inString) {
      const after = this.readString(at, stack);
      if (after === -1) return text.piece;
      at = after;
    }
    while (at < end) {
      const byte = json[at]!;
      if (byte === QUOTE) {
        const inObject = stack.charCodeAt(stack.length - 1) === OPEN_BRACE;
        const key = inObject ? (keys.at(-1) ?? null) : null;
        if (inObject && expectKey) {
          const close = this.closingQuote(at + 1, end);
          if (close === -1) return undefined;
          const name = decode(json, at + 1, close);
          keys[keys.length - 1] = name;
          if (this.checkKeys) this.noteKey(name);
          expectKey = false;
          at = close + 1;
        } else if (key !== null && STRUCTURAL_KEYS.has(key)) {
          const close = this.closingQuote(at + 1, end);
          if (close === -1) return undefined;
          at = close + 1;
        } else {
          text.startPart(at, stack);
          const after = this.readString(at + 1, stack);
          if (after === -1) return text.piece;
          at = after;
        }
        continue;
      }
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        stack += byte === OPEN_BRACE ? '{' : '[';
        keys.push(null);
        if (this.checkKeys) this.seenKeys.push(byte === OPEN_BRACE ? new Set() : null);
        expectKey = byte === OPEN_BRACE;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        stack = stack.slice(0, -1);
        keys.pop();
        if (this.checkKeys) this.seenKeys.pop();
      } else if (byte === COMMA) {
        expectKey = stack.charCodeAt(stack.length - 1) === OPEN_BRACE;
      }
      at += 1;
    }
    return this.whole ? text.finish() : undefined;
  }

  /**
   * Hands on a text string's content from `from`, a long one a segment at a time, each as long
   * as the piece still needs; the byte after its closing quote, or -1 once the piece is whole
   * (or the bytes end first).
   */
  private readString(from: number, stack: string): number {
    const { json, end, text } = this;
    for (;;) {
      if (from >= end) return -1;
      // Most text is a byte a character; where it is more, the next segment reads on. No more
      // than that: where the segment that makes a piece whole ends is where a hit in that piece
      // reads to (its `until`), and twice as much made a search read twice the bytes.
      const limit = Math.min(end, from + text.charsWanted() + 64);
      const close = this.closingQuote(from, limit);
      const to = close === -1 ? segmentEnd(json, from, limit) : close;
      text.append(decode(json, from, to), from, to, stack);
      if (text.piece !== undefined) return -1;
      if (close !== -1) return close + 1;
      from = to;
    }
  }

  /**
   * The index of the quote that closes the string whose content goes on at `from`, if it is
   * before `limit`; else -1. (At the end of a whole message, a string that never closes is an
   * error.)
   */
  private closingQuote(from: number, limit: number): number {
    const { json } = this;
    // A loop over the bytes: code is dense with escaped quotes, and a call to Buffer#indexOf
    // for each cost more than reading the bytes here.
    for (let at = from; at < limit; at += 1) {
      const byte = json[at];
      if (byte === BACKSLASH) at += 1;
      else if (byte === QUOTE) return at;
    }
    if (limit >= this.end && this.whole) throw new SyntaxError('unterminated string in a stored message');
    return -1;
  }

  private noteKey(name: string): void {
    const seen = this.seenKeys.at(-1);
    if (INDEX_LIKE.test(name) || seen?.has(name)) this.keysDiffer = true;
    seen?.add(name);
  }
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

/**
 * The text as it grows, and the pieces cut from it as `chunks` cuts them, until piece `n`;
 * started at piece `index` (with `parts` strings before, and `drop` characters of the piece
 * before to leave out) when it is read from where that piece starts.
 */
class PieceText {
  private text = '';
  /** Where the next piece starts, and which piece it is. */
  private start = 0;
  piece: string | undefined;

  constructor(
    private readonly n: number,
    private index = 0,
    private parts = 0,
    private drop = 0,
    readonly finder: StartFinder | null = null,
  ) {}

  /** A string's text begins, its opening quote at `quoteAt`: after the first, a newline first. */
  startPart(quoteAt: number, stack: string): void {
    if (this.parts > 0) {
      this.finder?.separator(this.text.length, quoteAt, stack);
      this.text += '\n';
    }
    this.parts += 1;
  }

  /** Characters still needed before the next piece can be cut. */
  charsWanted(): number {
    return Math.max(1, this.start + CHUNK_CHARS + 1 - this.text.length + this.drop);
  }

  /** Characters of a string, decoded from its bytes `from` to `to`. */
  append(chars: string, from: number, to: number, stack: string): void {
    if (this.drop > 0) {
      const dropped = Math.min(this.drop, chars.length);
      chars = chars.slice(dropped);
      this.drop -= dropped;
    }
    this.finder?.content(this.text.length, chars, from, to, stack);
    this.text += chars;
    // A piece is cut once the text goes past its longest end, as `chunks` cuts a longer text;
    // the last piece takes the rest of the text, so it waits for the end.
    while (this.index < MAX_CHUNKS - 1 && this.text.length > this.start + CHUNK_CHARS) {
      const end = this.cutAt();
      if (this.index === this.n) {
        this.piece = this.text.slice(this.start, end);
        return;
      }
      this.finder?.cut(this.text, this.start, end, to);
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
      this.finder?.cut(this.text, this.start, end, this.finder.json.length);
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

/** Where a stretch of the text came from: a separating newline, or a string's bytes. */
interface Run {
  /** Its first character's position in the text. */
  pos: number;
  /** Its bytes (a separator's: its string's opening quote); `from` -1 when they cannot be counted. */
  from: number;
  to: number;
  /** Characters decoded from `from` that are not in the text (half of a surrogate pair). */
  skip: number;
  stack: string;
  separator: boolean;
}

/**
 * For `messagePieces`: every piece as it is cut, and where in the bytes each starts, found
 * from the runs of text the current text is made of.
 */
class StartFinder {
  readonly pieces: string[] = [];
  private readonly starts: Array<PieceStart | null> = [
    { at: 0, until: 0, skip: 0, stack: '', inString: false },
  ];
  private runs: Run[] = [];

  constructor(readonly json: Buffer) {}

  /** A start for each piece. */
  get pieceStarts(): Array<PieceStart | null> {
    return this.starts.slice(0, this.pieces.length);
  }

  separator(pos: number, quoteAt: number, stack: string): void {
    this.runs.push({ pos, from: quoteAt, to: quoteAt, skip: 0, stack, separator: true });
  }

  content(pos: number, chars: string, from: number, to: number, stack: string): void {
    if (chars.length > 0) this.runs.push({ pos, from, to, skip: 0, stack, separator: false });
  }

  /** The piece `text[start, end)` is cut, whole within the bytes before `until`. */
  cut(text: string, start: number, end: number, until: number): void {
    this.pieces.push(text.slice(start, end));
    const current = this.starts.at(-1);
    if (current) current.until = until;
    if (end >= text.length) return;
    // The next piece starts at `end`: in the last run at or before it.
    let i = this.runs.length - 1;
    while (i > 0 && this.runs[i]!.pos > end) i -= 1;
    const run = this.runs[i]!;
    const next = this.startIn(run, text, end);
    this.starts.push(next);
    // The text before `end` is cut off, and the runs that made it: the one the next piece
    // starts in now starts there.
    const rest = this.runs.slice(i + 1).map((r) => ({ ...r, pos: r.pos - end }));
    if (run.separator) rest.unshift({ ...run, pos: run.pos - end });
    else rest.unshift({ ...run, pos: 0, from: next ? next.at : -1, skip: next?.skip ?? 0 });
    this.runs = rest;
  }

  private startIn(run: Run, text: string, pos: number): PieceStart | null {
    if (run.separator) {
      return pos === run.pos ? { at: run.from, until: 0, skip: 0, stack: run.stack, inString: false } : null;
    }
    // Invalid UTF-8 decodes to U+FFFD, whose bytes cannot be counted back: no start there.
    if (run.from === -1 || text.slice(run.pos, pos + 1).includes('\uFFFD')) return null;
    const place = byteAtChar(this.json, run.from, run.to, pos - run.pos + run.skip);
    return place && { at: place.at, until: 0, skip: place.skip, stack: run.stack, inString: true };
  }
}

/**
 * The byte in the string content `from`..`to` where its character number `chars` (in UTF-16
 * units) begins; `skip` 1 when that unit is the second half of a four-byte character.
 */
function byteAtChar(
  json: Buffer,
  from: number,
  to: number,
  chars: number,
): { at: number; skip: number } | null {
  let units = 0;
  let at = from;
  while (units < chars && at < to) {
    const byte = json[at]!;
    if (byte === BACKSLASH) {
      at += json[at + 1] === 0x75 /* u */ ? LONGEST_ESCAPE : 2;
      units += 1;
    } else if (byte < 0x80) {
      at += 1;
      units += 1;
    } else if (byte >= 0xf0) {
      if (units + 2 > chars) return { at, skip: 1 };
      at += 4;
      units += 2;
    } else {
      at += byte >= 0xe0 ? 3 : 2;
      units += 1;
    }
  }
  return units === chars && at <= to ? { at, skip: 0 } : null;
}
