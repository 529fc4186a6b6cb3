import type { SearchTerm } from '../../src-shared/search-terms.js';
import type { IndexedPiece, MessageIndexer } from '../store-postgres/search.js';
import { piecesOf } from './message-piece.js';

/**
 * Text as PostgreSQL's full-text search indexes it for Session Desk: cut into words here, as the
 * desktop's FTS5 index cuts them, rather than by PostgreSQL's parser. That parser (behind every
 * text search configuration, `simple` too) keeps file paths, URLs, e-mail addresses, host
 * names and version numbers whole (`src/upload.ts` is one lexeme), so `upload` would not find
 * them. Here a word is a run of letters, digits and marks, lowercased and with Latin diacritics
 * folded (FTS5's `unicode61 remove_diacritics 2`), neither stemmed nor dropped as a stop word:
 * `simple`'s rules on FTS5's words. The query side cuts a search's terms the same way.
 */

/** Letters and digits make words, as the query's terms are cut (src-shared/search-terms.ts). */
const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;
/** Combining diacritics, taken off as FTS5's unicode61 tokenizer takes them off. */
const DIACRITICS = /[\u0300-\u036f]/gu;
/** PostgreSQL's limits: a lexeme's bytes, a position, and the positions kept per lexeme. */
const LEXEME_BYTES_MAX = 2047;
const POSITION_MAX = 16_383;
const POSITIONS_PER_LEXEME = 256;

const fold = (token: string) => token.normalize('NFD').replace(DIACRITICS, '').normalize('NFC');

/** A token as a lexeme: `null` when nothing is left of it or PostgreSQL cannot keep it. */
function lexemeOf(token: string): string | null {
  const folded = fold(token);
  return folded === '' || Buffer.byteLength(folded) > LEXEME_BYTES_MAX ? null : folded;
}

/** The tsvector literal of a piece of text: each word with its positions, for phrases. */
export function tsvectorOf(text: string): string {
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const [token] of text.toLowerCase().matchAll(TOKEN)) {
    const lexeme = fold(token);
    if (lexeme === '') continue;
    position += 1;
    // A word too long for PostgreSQL still takes its place, so a phrase never spans it.
    if (Buffer.byteLength(lexeme) > LEXEME_BYTES_MAX) continue;
    const at = positions.get(lexeme);
    if (!at) positions.set(lexeme, [Math.min(position, POSITION_MAX)]);
    else if (at.length < POSITIONS_PER_LEXEME) at.push(Math.min(position, POSITION_MAX));
  }
  // Words are letters, digits and marks only: nothing in them needs quoting but the quotes.
  return [...positions].map(([lexeme, at]) => `'${lexeme}':${[...new Set(at)].join(',')}`).join(' ');
}

/**
 * The tsquery of a search's terms: every term must match; a phrase's words in a row; a
 * prefix's last word as a prefix. Null when no term is left to search for.
 */
export function tsqueryOf(terms: SearchTerm[]): string | null {
  const parts: string[] = [];
  for (const term of terms) {
    const lexemes = term.tokens.map(lexemeOf).filter((l): l is string => l !== null);
    if (lexemes.length === 0) continue;
    const last = lexemes.length - 1;
    const quoted = lexemes.map((l, i) => `'${l}'${term.kind === 'prefix' && i === last ? ':*' : ''}`);
    parts.push(`(${quoted.join(' <-> ')})`);
  }
  return parts.length === 0 ? null : parts.join(' & ');
}

/** A message's pieces as `search_pieces` keeps them: the same pieces as the desktop's index. */
export const indexMessage: MessageIndexer = (payload: Buffer): IndexedPiece[] => {
  const { pieces, starts } = piecesOf(payload);
  // A piece without a word (a message of ids and types only) matches nothing: no row, as on FTS5.
  return pieces
    .map((piece, chunk) => ({ chunk, vector: tsvectorOf(piece), start: starts?.[chunk] ?? null }))
    .filter((piece) => piece.vector !== '');
};
