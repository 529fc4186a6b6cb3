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

/** Between the two words of a pair: never in a word, which is letters, digits and marks only. */
const PAIR_JOIN = '_';
const pairOf = (first: string, second: string) => `${first}${PAIR_JOIN}${second}`;
/** A pair PostgreSQL can keep as a lexeme: a pair too long for one is searched by positions. */
const pairFits = (pair: string) =>
  pair.length * 3 <= LEXEME_BYTES_MAX || Buffer.byteLength(pair) <= LEXEME_BYTES_MAX;

/**
 * The `tsvector` literals of a piece of text: its words, each with its positions (for phrases
 * of more than two words, and for ranking), and every pair of words next to each other, as one
 * lexeme (`first_second`), without positions: a phrase of two words is one lexeme to look up in
 * the index, whatever the positions PostgreSQL keeps (16,383 per piece, 256 per word).
 */
export function tsvectorsOf(text: string): { words: string; pairs: string } {
  const positions = new Map<string, number[]>();
  const pairs = new Set<string>();
  let position = 0;
  let previous: string | null = null;
  const ascii = !NOT_ASCII.test(text);
  for (const [token] of text.toLowerCase().matchAll(TOKEN)) {
    const lexeme = ascii ? token : fold(token);
    if (lexeme === '') continue;
    position += 1;
    // A word too long for PostgreSQL still takes its place, so a phrase never spans it.
    if (lexeme.length * 3 > LEXEME_BYTES_MAX && Buffer.byteLength(lexeme) > LEXEME_BYTES_MAX) {
      previous = null;
      continue;
    }
    if (previous !== null) {
      const pair = pairOf(previous, lexeme);
      if (pairFits(pair)) pairs.add(pair);
    }
    previous = lexeme;
    const at = Math.min(position, POSITION_MAX);
    const seen = positions.get(lexeme);
    if (!seen) positions.set(lexeme, [at]);
    else if (seen.length < POSITIONS_PER_LEXEME && seen.at(-1) !== at) seen.push(at);
  }
  // Words are letters, digits and marks only: nothing in them needs quoting but the quotes.
  let words = '';
  for (const [lexeme, at] of positions) words += `${words === '' ? '' : ' '}'${lexeme}':${at.join(',')}`;
  let pairList = '';
  for (const pair of pairs) pairList += `${pairList === '' ? '' : ' '}'${pair}'`;
  return { words, pairs: pairList };
}

/**
 * What a search asks of `search_pieces`: `words`, a `tsquery` on the words (single words,
 * prefixes, and the order of a phrase of more than two words), `pairs`, one on the pairs (each
 * phrase's words two by two), either null when the search has none; `rank`, the whole search on
 * the words with positions, which orders the best matches first; and its exact lexemes and
 * prefixes, whose frequency in the database's statistics says how common the search is.
 */
export interface PiecesQuery {
  words: string | null;
  pairs: string | null;
  rank: string;
  lexemes: { words: string[]; pairs: string[] };
  prefixes: { words: string[]; pairs: string[] };
}

/**
 * The query of a search's terms: every term must match; a phrase's words in a row; a prefix's
 * last word as a prefix. Null when no term is left to search for.
 */
export function piecesQueryOf(terms: SearchTerm[]): PiecesQuery | null {
  const words: string[] = [];
  const pairs: string[] = [];
  const rank: string[] = [];
  const lexemes = { words: [] as string[], pairs: [] as string[] };
  const prefixes = { words: [] as string[], pairs: [] as string[] };
  for (const term of terms) {
    const found = term.tokens.map(lexemeOf).filter((l): l is string => l !== null);
    if (found.length === 0) continue;
    const last = found.length - 1;
    const prefix = (i: number) => term.kind === 'prefix' && i === last;
    const quoted = found.map((l, i) => `'${l}'${prefix(i) ? ':*' : ''}`);
    rank.push(`(${quoted.join(' <-> ')})`);
    if (found.length === 1) {
      words.push(quoted[0] as string);
      (prefix(0) ? prefixes : lexemes).words.push(found[0] as string);
      continue;
    }
    let allPaired = true;
    for (let i = 1; i < found.length; i += 1) {
      const pair = pairOf(found[i - 1] as string, found[i] as string);
      if (!pairFits(pair)) {
        allPaired = false;
        continue;
      }
      pairs.push(`'${pair}'${prefix(i) ? ':*' : ''}`);
      (prefix(i) ? prefixes : lexemes).pairs.push(pair);
    }
    // Pairs in a piece say its words were next to each other somewhere; that they are all in
    // this order, in one place, takes their positions.
    if (found.length > 2 || !allPaired) words.push(`(${quoted.join(' <-> ')})`);
  }
  if (rank.length === 0) return null;
  return {
    words: words.length === 0 ? null : words.join(' & '),
    pairs: pairs.length === 0 ? null : pairs.join(' & '),
    rank: rank.join(' & '),
    lexemes,
    prefixes,
  };
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
    const { words, pairs } = tsvectorsOf(piece);
    // A piece without a word (a message of ids and types only) matches nothing: no row, as on FTS5.
    if (words !== '') indexed.push({ chunk, words, pairs, start: starts?.[chunk] ?? null });
  }
  return indexed;
};
