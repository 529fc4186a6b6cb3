import { PREVIEW_MAX_CHARS, TITLE_MAX_CHARS, UNTITLED_SESSION } from './constants.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The first `limit` user-perceived characters of `text`, so a cut never breaks an emoji or
 * an accent. It stops early: segmenting a whole long message costs more than quadratic time.
 */
function graphemes(text: string, limit: number): string[] {
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

/** Preview rule: whitespace collapsed, at most 120 characters on a word boundary, "..." when cut. */
export function makePreview(text: string): string {
  const { text: kept, cut } = cutOnWordBoundary(collapseWhitespace(text), PREVIEW_MAX_CHARS);
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
