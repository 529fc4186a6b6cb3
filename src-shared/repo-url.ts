const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const NAME = '[A-Za-z0-9_.-]{1,100}';
const REPO_URL = new RegExp(`^https://(${LABEL}(?:\\.${LABEL})*)(?::\\d{1,5})?/(${NAME})/(${NAME})/?$`, 'u');

export interface ParsedRepoUrl {
  /** The URL without a trailing `.git` or `/`. */
  url: string;
  /** `<owner>/<repo>`. */
  repository: string;
}

/**
 * Accepts `https://<host>/<owner>/<repo>`, with an optional trailing `.git` or `/`.
 * Anything else (other schemes, credentials, query strings, deeper paths) is `null`.
 */
export function parseRepoUrl(input: string): ParsedRepoUrl | null {
  const match = REPO_URL.exec(input);
  if (!match) return null;
  const owner = match[2] ?? '';
  const repo = (match[3] ?? '').replace(/\.git$/u, '');
  if ([owner, repo].some((part) => part === '' || part === '.' || part === '..')) return null;
  const base = input.replace(/\/$/u, '').replace(/\.git$/u, '');
  return { url: base, repository: `${owner}/${repo}` };
}

/** A conservative subset of git's ref-name rules. */
export const BRANCH_PATTERN =
  /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)(?!.*@\{)[A-Za-z0-9._/-]{1,200}$/u;

/**
 * What a repository filter asks for, lower-cased: a whole `owner/repo` or every repository of
 * an `owner`. Accepts either, or a repository's URL (`https://github.com/Acme/Web.git`).
 */
export function repositoryFilter(input: string): { owner: string } | { repository: string } {
  const text = input.trim();
  const parsed = parseRepoUrl(text);
  if (parsed) return { repository: parsed.repository.toLowerCase() };
  const path = text
    .replace(/^[a-z]+:\/\/[^/]+\//iu, '')
    .replace(/^\/+|\/+$/gu, '')
    .replace(/\.git$/iu, '')
    .toLowerCase();
  return path.includes('/') ? { repository: path } : { owner: path };
}
