import { DEFAULT_BASE_BRANCH } from '../../src-shared/constants.js';
import { parseRepoUrl } from '../../src-shared/repo-url.js';
import { makeTitle } from '../../src-shared/text.js';
import { newId } from '../accounts/secrets.js';
import type { NewSession } from '../store/sessions.js';

/** What a session starts from, whoever makes it: a person's request or an imported file. */
export interface SessionDraft {
  workspaceId: string;
  authorId: string;
  /** The person's first prompt; also where the title comes from when none is given. */
  initialMessage?: string | undefined;
  /** The first prompt of an imported conversation: titles it, but is not a message of its own. */
  firstPrompt?: string | undefined;
  title?: string | undefined;
  model: string;
  baseBranch?: string | undefined;
  /** Parsed into the URL and `<owner>/<repo>`; a URL that does not parse is left out. */
  repoUrl?: string | undefined;
  /** `<owner>/<repo>` when known without a URL (an import reads it from the working folder). */
  repository?: string | undefined;
}

/** A new session's id, title and defaults: the one place they are decided. */
export function newSession(draft: SessionDraft): Omit<NewSession, 'createdAt'> {
  const repo = draft.repoUrl === undefined ? null : parseRepoUrl(draft.repoUrl);
  const repository = repo?.repository ?? draft.repository;
  return {
    id: newId('session'),
    workspaceId: draft.workspaceId,
    authorId: draft.authorId,
    title: draft.title ?? makeTitle(draft.initialMessage ?? draft.firstPrompt),
    model: draft.model,
    baseBranch: draft.baseBranch ?? DEFAULT_BASE_BRANCH,
    ...(draft.initialMessage === undefined ? {} : { initialMessage: draft.initialMessage }),
    ...(repo ? { repoUrl: repo.url } : {}),
    ...(repository ? { repository } : {}),
  };
}
