import { SEARCH_PREFIX_MIN, SEARCH_WORDS_MAX } from '../../src-shared/search.js';
import { searchTerms, type SearchTerm } from '../../src-shared/search-terms.js';

export type { SearchTerm };

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

const quoted = (tokens: string[]) => `"${tokens.join(' ')}"`;

export function parseQuery(text: string): ParsedQuery | RefusedQuery {
  const terms = searchTerms(text);
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
