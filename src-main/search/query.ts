import { SEARCH_PREFIX_MIN, SEARCH_WORDS_MAX } from '../../src-shared/search.js';

/**
 * What a person types in the search box, made into an FTS5 expression that cannot be a syntax
 * error: words match in any order and case, `"quoted phrases"` as phrases, `foo*` as a prefix.
 * Every term is quoted for FTS5, so operators (`AND`, `NEAR`, `-`, `:`) typed by a person are
 * searched as words, never run.
 *
 * The cost of a query grows with its words and, far more, with its prefixes (a prefix reads the
 * postings of every word it starts): a term repeated counts once, a query of more than
 * SEARCH_WORDS_MAX words or with a prefix shorter than SEARCH_PREFIX_MIN is refused.
 */

export type SearchTerm =
  | { kind: 'word'; tokens: string[] }
  | { kind: 'phrase'; tokens: string[] }
  | { kind: 'prefix'; tokens: string[] };

export interface ParsedQuery {
  /** The expression for `MATCH`. */
  match: string;
  terms: SearchTerm[];
}

/** A query refused before it runs: what to tell the person, and of which part. */
export interface RefusedQuery {
  refused: string;
  detail: string;
}

/** Letters and digits make words, as FTS5's unicode61 tokenizer cuts them. */
const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;

export function tokensOf(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

const quoted = (tokens: string[]) => `"${tokens.join(' ')}"`;

function termsOf(text: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  const pattern = /"([^"]*)"?|(\S+)/gu;
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined) {
      const tokens = tokensOf(match[1]);
      if (tokens.length > 0) terms.push({ kind: tokens.length === 1 ? 'word' : 'phrase', tokens });
      continue;
    }
    const word = match[2] ?? '';
    const tokens = tokensOf(word);
    if (tokens.length === 0) continue;
    if (word.endsWith('*')) terms.push({ kind: 'prefix', tokens });
    // `foo.bar` or `snake_case` are one term of several tokens in a row, as FTS5 reads them.
    else terms.push({ kind: tokens.length === 1 ? 'word' : 'phrase', tokens });
  }
  const seen = new Set<string>();
  return terms.filter((term) => {
    const key = `${term.kind}:${term.tokens.join(' ')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function parseQuery(text: string): ParsedQuery | RefusedQuery {
  const terms = termsOf(text);
  if (terms.length === 0) {
    return { refused: 'Search for at least one word', detail: 'has no letters or digits to search for' };
  }
  const words = terms.reduce((sum, term) => sum + term.tokens.length, 0);
  if (words > SEARCH_WORDS_MAX) {
    return {
      refused: `Search for at most ${SEARCH_WORDS_MAX} words at once; this search has ${words}`,
      detail: `has ${words} words (a phrase counts each of its words; a word repeated counts once), more than ${SEARCH_WORDS_MAX}`,
    };
  }
  for (const term of terms) {
    const stem = term.tokens.at(-1) ?? '';
    if (term.kind === 'prefix' && [...stem].length < SEARCH_PREFIX_MIN) {
      return {
        refused: `A prefix needs at least ${SEARCH_PREFIX_MIN} letters or digits before its *; “${stem}*” has ${[...stem].length}`,
        detail: `“${stem}*” is a prefix shorter than ${SEARCH_PREFIX_MIN} characters`,
      };
    }
  }
  const match = terms.map((t) => (t.kind === 'prefix' ? `${quoted(t.tokens)}*` : quoted(t.tokens))).join(' ');
  return { match, terms };
}
