/**
 * Markdown as plain text, for one-line previews: emphasis, code marks, headings, list and
 * quote markers and link targets go; their words stay.
 */
export function plainText(markdown: string): string {
  return markdown
    .replace(/```[^\n]*\n?/gu, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, '$1')
    .replace(/^\s*#{1,6}\s+/gmu, '')
    .replace(/^\s*(?:[-*+]|\d+\.)\s+(?=\S)/gmu, '')
    .replace(/^\s*>\s+/gmu, '')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/gu, '$2')
    .replace(/(\*|_)(?=\S)(.+?)(?<=\S)\1(?![\w*])/gu, '$2')
    .replace(/~~(.+?)~~/gu, '$1')
    .replace(/`([^`]*)`/gu, '$1')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Titles are cut at 80 characters on a word boundary; the rule is the server's. */
const TITLE_CUT_FROM = 60;

/**
 * A title with "…" when it was cut from a longer first sentence: the first prompt goes on
 * with more words where the title stops. A renamed title is shown as it is.
 */
export function displayTitle(title: string, firstPrompt: string | undefined): string {
  if (firstPrompt === undefined || title.length < TITLE_CUT_FROM) return title;
  const prompt = firstPrompt.replace(/\s+/gu, ' ').trim();
  if (!prompt.startsWith(title)) return title;
  return /^ [\p{L}\p{N}]/u.test(prompt.slice(title.length)) ? `${title}…` : title;
}
