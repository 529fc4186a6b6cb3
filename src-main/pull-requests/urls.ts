import type { AssistantMessage } from '../../src-shared/sessions.js';

/** A pull request named by its web address. */
export interface PullRequestRef {
  number: number;
  url: string;
  /** The host, with its port when it has one, lower-cased. */
  host: string;
  /** `<owner>/<repo>` as written in the address. */
  repository: string;
}

/**
 * Pull-request addresses as code hosts print them: `/pull/N` (GitHub, GitHub Enterprise, Gitea,
 * Forgejo) and `/-/merge_requests/N` or `/merge_requests/N` (GitLab).
 */
const PR_URL =
  /https:\/\/([A-Za-z0-9.-]+(?::\d+)?)\/([\w.-]+)\/([\w.-]+)\/(?:pull|-\/merge_requests|merge_requests)\/(\d+)/gu;

/** Every pull-request address in a piece of text, in order. */
export function pullRequestsIn(text: string): PullRequestRef[] {
  return [...text.matchAll(PR_URL)].map((m) => ({
    number: Number(m[4]),
    url: m[0],
    host: (m[1] ?? '').toLowerCase(),
    repository: `${m[2]}/${m[3]}`,
  }));
}

/** `https://<host>/<owner>/<repo>` of a session: its host and repository, lower-cased. */
function repositoryOf(repoUrl: string): { host: string; repository: string } | null {
  const match = /^https:\/\/([^/]+)\/([^/]+)\/([^/]+?)(?:\.git)?\/?$/u.exec(repoUrl);
  if (!match) return null;
  return { host: (match[1] ?? '').toLowerCase(), repository: `${match[2]}/${match[3]}`.toLowerCase() };
}

/**
 * Whether a pull request belongs to the session's repository: the same host and the same
 * `<owner>/<repo>`, compared without regard to case (as GitHub does).
 */
export function belongsToRepository(pr: PullRequestRef, repoUrl: string | undefined): boolean {
  const own = repoUrl === undefined ? null : repositoryOf(repoUrl);
  return own !== null && own.host === pr.host && own.repository === pr.repository.toLowerCase();
}

/** The text of an agent's message where a pull request it opened would be reported. */
export function reportedText(message: AssistantMessage): string {
  return message.message.content
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'tool_result')
        return typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
      return '';
    })
    .join('\n');
}

/**
 * What an agent's message says about pull requests: the last one of the session's repository
 * it names (the one to record), and those of other repositories (ignored).
 */
export function pullRequestsReported(
  message: AssistantMessage,
  repoUrl: string | undefined,
): { own?: PullRequestRef; others: PullRequestRef[] } {
  const found = pullRequestsIn(reportedText(message));
  const own = found.filter((pr) => belongsToRepository(pr, repoUrl)).at(-1);
  return { ...(own ? { own } : {}), others: found.filter((pr) => !belongsToRepository(pr, repoUrl)) };
}

/** Whether a session's repository is on github.com, where `gh` can open and read pull requests. */
export function isGitHubRepository(repoUrl: string): boolean {
  return repositoryOf(repoUrl)?.host === 'github.com';
}
