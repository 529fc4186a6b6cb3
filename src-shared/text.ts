import { PREVIEW_MAX_CHARS, TITLE_MAX_CHARS, UNTITLED_SESSION } from './constants.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The first `limit` user-perceived characters of `text`, so a cut never breaks an emoji or
 * an accent. It stops early: segmenting a whole long message costs more than quadratic time.
 */
/** Printable ASCII: every character is a grapheme of its own, and none joins the next. */
const PLAIN = /^[\x20-\x7e]*$/u;

function graphemes(text: string, limit: number): string[] {
  // Segmenting costs about a microsecond a grapheme: most text needs none of it.
  const head = text.slice(0, limit + 1);
  if (PLAIN.test(head)) return head.slice(0, limit).split('');
  const chars: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    if (chars.length === limit) break;
    chars.push(segment);
  }
  return chars;
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * Cuts `text` (already collapsed) to at most `max` characters, at the last space
 * that fits; one word longer than `max` is cut inside the word.
 */
function cutOnWordBoundary(text: string, max: number): { text: string; cut: boolean } {
  const chars = graphemes(text, max + 1);
  if (chars.length <= max) return { text, cut: false };
  if (chars[max] === ' ') return { text: chars.slice(0, max).join(''), cut: true };
  const head = chars.slice(0, max);
  const lastSpace = head.lastIndexOf(' ');
  const kept = lastSpace > 0 ? head.slice(0, lastSpace) : head;
  return { text: kept.join('').trimEnd(), cut: true };
}

/**
 * The start of `text` with whitespace collapsed, long enough that its first `count`
 * graphemes are what collapsing the whole text would give: a message can be megabytes,
 * and a preview needs 121 characters of it.
 */
function collapsedHead(text: string, count: number): string {
  for (let length = 1024; length < text.length; length *= 4) {
    const head = text.slice(0, length).replace(/\s+/gu, ' ').trimStart();
    // One grapheme more than needed: the last one needed is then complete.
    if (graphemes(head, count + 1).length === count + 1) return head;
  }
  return collapseWhitespace(text);
}

/** Preview rule: whitespace collapsed, at most 120 characters on a word boundary, "..." when cut. */
export function makePreview(text: string): string {
  const { text: kept, cut } = cutOnWordBoundary(
    collapsedHead(text, PREVIEW_MAX_CHARS + 1),
    PREVIEW_MAX_CHARS,
  );
  return cut ? `${kept}...` : kept;
}

const TRAILING_PUNCTUATION = /[\p{P}\s]+$/u;

/**
 * Title rule: the first line, then its first sentence; whitespace collapsed; at most 80
 * characters cut on a word boundary; no trailing punctuation. Nothing left: "Untitled session".
 */
export function makeTitle(initialMessage: string | undefined): string {
  if (initialMessage === undefined) return UNTITLED_SESSION;
  const firstLine = initialMessage.trim().split(/\r?\n/u)[0] ?? '';
  const sentenceEnd = /[.!?](?=\s|$)/u.exec(firstLine);
  const sentence = sentenceEnd ? firstLine.slice(0, sentenceEnd.index + 1) : firstLine;
  const { text } = cutOnWordBoundary(collapseWhitespace(sentence), TITLE_MAX_CHARS);
  const title = text.replace(TRAILING_PUNCTUATION, '');
  return title === '' ? UNTITLED_SESSION : title;
}
