/**
 * The terms of what a person types in a search, as the server's index matches them and as the
 * dashboard marks them in a message: words match in any order and case, `"quoted phrases"` as
 * phrases, `foo*` as a prefix.
 */
export type SearchTerm =
  | { kind: 'word'; tokens: string[] }
  | { kind: 'phrase'; tokens: string[] }
  | { kind: 'prefix'; tokens: string[] };

/** Letters and digits make words, as FTS5's unicode61 tokenizer cuts them. */
const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;

function tokensOf(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

/** The distinct terms of a search, in the order typed. */
export function searchTerms(text: string): SearchTerm[] {
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

const WORD_CHAR = '[\\p{L}\\p{N}\\p{M}]';
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');

/** One pattern finding every term as the index matched it: whole words, phrases, prefixes. */
export function termPattern(terms: SearchTerm[]): RegExp {
  const alternatives = terms.map((term) => {
    const body = term.tokens.map(escape).join(`${WORD_CHAR.replace('[', '[^')}+`);
    const tail = term.kind === 'prefix' ? `${WORD_CHAR}*` : `(?!${WORD_CHAR})`;
    return `(?<!${WORD_CHAR})${body}${tail}`;
  });
  return new RegExp(alternatives.join('|'), 'giu');
}
