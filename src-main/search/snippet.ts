import { termPattern, type SearchTerm } from '../../src-shared/search-terms.js';

/** A snippet is plain text of at most this many characters. */
export const SNIPPET_CHARS = 240;

export interface Snippet {
  snippet: string;
  /** `[start, end)` character ranges of the matched terms in `snippet`. */
  highlights: Array<[number, number]>;
}

/**
 * The part of `text` around the first match of the terms, whitespace collapsed, with the
 * matches in it marked. Text without a match (a term split across pieces) gives its start.
 */
export function makeSnippet(text: string, terms: SearchTerm[]): Snippet {
  const pattern = termPattern(terms);
  const at = pattern.exec(text)?.index ?? 0;
  // A window around the match, wide enough to fill the snippet once whitespace is collapsed.
  const from = Math.max(0, at - SNIPPET_CHARS);
  const to = Math.min(text.length, at + SNIPPET_CHARS * 2);
  const window = text.slice(from, to).replace(/\s+/gu, ' ');
  pattern.lastIndex = 0;
  const matchAt = pattern.exec(window)?.index ?? 0;
  pattern.lastIndex = 0;
  // Some words of context before the match, starting at a word.
  let start = Math.max(0, matchAt - 60);
  if (start > 0) {
    const space = window.indexOf(' ', start);
    start = space !== -1 && space < matchAt ? space + 1 : matchAt;
  }
  const cutStart = from > 0 || window.slice(0, start).trim() !== '';
  const cutEnd = to < text.length || start + SNIPPET_CHARS < window.length;
  const room = SNIPPET_CHARS - (cutStart ? 1 : 0) - (cutEnd ? 1 : 0);
  let body = window.slice(start, start + room + 1);
  if (body.length > room) {
    const space = body.lastIndexOf(' ', room);
    body = body.slice(0, space > room / 2 ? space : room);
  }
  body = body.trim();
  const snippet = `${cutStart ? '…' : ''}${body}${cutEnd ? '…' : ''}`;
  const highlights: Array<[number, number]> = [];
  for (const match of snippet.matchAll(pattern)) {
    highlights.push([match.index, match.index + match[0].length]);
  }
  return { snippet, highlights };
}
