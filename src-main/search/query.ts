/**
 * What a person types in the search box, made into an FTS5 expression that cannot be a syntax
 * error: words match in any order and case, `"quoted phrases"` as phrases, `foo*` as a prefix.
 * Every term is quoted for FTS5, so operators (`AND`, `NEAR`, `-`, `:`) typed by a person are
 * searched as words, never run.
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

/** Letters and digits make words, as FTS5's unicode61 tokenizer cuts them. */
const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;

export function tokensOf(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

const quoted = (tokens: string[]) => `"${tokens.join(' ')}"`;

/** Null when the text holds nothing to search for (only punctuation, or empty). */
export function parseQuery(text: string): ParsedQuery | null {
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
  if (terms.length === 0) return null;
  const match = terms.map((t) => (t.kind === 'prefix' ? `${quoted(t.tokens)}*` : quoted(t.tokens))).join(' ');
  return { match, terms };
}
