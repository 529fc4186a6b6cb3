import type { SearchTerm } from '../../src-shared/search-terms.js';
import type { IndexedPiece, MessageIndexer } from '../store-postgres/search.js';
import { piecesOf } from './message-piece.js';
import { handOverTurn } from '../turns.js';

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

/** Beyond ASCII, a token is folded; most are ASCII, and normalizing costs (bench/search-postgres.ts). */
const NOT_ASCII = /[^\t\n\r\u0020-\u007e]/u;
const fold = (token: string) =>
  NOT_ASCII.test(token) ? token.normalize('NFD').replace(DIACRITICS, '').normalize('NFC') : token;

/** A token as a lexeme: `null` when nothing is left of it or PostgreSQL cannot keep it. */
function lexemeOf(token: string): string | null {
  const folded = fold(token);
  return folded === '' || Buffer.byteLength(folded) > LEXEME_BYTES_MAX ? null : folded;
}

/** The tsvector literal of a piece of text: each word with its positions, for phrases. */
export function tsvectorOf(text: string): string {
  const positions = new Map<string, number[]>();
  let position = 0;
  const ascii = !NOT_ASCII.test(text);
  for (const [token] of text.toLowerCase().matchAll(TOKEN)) {
    const lexeme = ascii ? token : fold(token);
    if (lexeme === '') continue;
    position += 1;
    // A word too long for PostgreSQL still takes its place, so a phrase never spans it.
    if (lexeme.length * 3 > LEXEME_BYTES_MAX && Buffer.byteLength(lexeme) > LEXEME_BYTES_MAX) continue;
    const at = Math.min(position, POSITION_MAX);
    const seen = positions.get(lexeme);
    if (!seen) positions.set(lexeme, [at]);
    else if (seen.length < POSITIONS_PER_LEXEME && seen.at(-1) !== at) seen.push(at);
  }
  // Words are letters, digits and marks only: nothing in them needs quoting but the quotes.
  let vector = '';
  for (const [lexeme, at] of positions) vector += `${vector === '' ? '' : ' '}'${lexeme}':${at.join(',')}`;
  return vector;
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

/** Time spent cutting a large message before the event loop is let go for a turn (as on the desktop). */
const SLICE_MS = 8;

/**
 * A message's pieces as `search_pieces` keeps them: the same pieces as the desktop's index. A
 * large message's words are cut a slice at a time, so that a 16 MiB tool output does not hold
 * the server's event loop for the second its words take.
 */
export const indexMessage: MessageIndexer = async (payload: Buffer): Promise<IndexedPiece[]> => {
  const { pieces, starts } = piecesOf(payload);
  const indexed: IndexedPiece[] = [];
  let began = performance.now();
  for (const [chunk, piece] of pieces.entries()) {
    if (performance.now() - began > SLICE_MS) {
      await handOverTurn();
      began = performance.now();
    }
    const vector = tsvectorOf(piece);
    // A piece without a word (a message of ids and types only) matches nothing: no row, as on FTS5.
    if (vector !== '') indexed.push({ chunk, vector, start: starts?.[chunk] ?? null });
  }
  return indexed;
};
