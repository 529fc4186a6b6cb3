import type { ContinuationChoices } from '../../src-shared/continuation.js';
import { isAdministrator } from '../accounts/administrator.js';
import type { AgentHost } from '../agents/run/host.js';
import { conflict } from '../errors.js';
import type { Repos } from '../store/storage.js';
import type { SessionRow } from '../store/session-row.js';

/** The rule follow-up.ts applies before an agent may work in a person's folder. */
const ADMINISTRATOR_ONLY =
  'Only the administrator of this Session Desk (the account made at first-run setup) may continue it in a folder of this machine.';

/**
 * Where a follow-up to an imported session can go on for `userId`, by the checks a follow-up
 * itself meets (planContinuation's, and who may work in a person's folder): the dashboard offers
 * only what would start, and says why not.
 */
export async function continueChoices(
  deps: { agents: AgentHost; storage: { repos: Repos } },
  session: SessionRow,
  userId: string,
): Promise<ContinuationChoices> {
  const { source } = session;
  if (!source) {
    throw conflict(
      "This session was not imported from an agent CLI's files: a follow-up goes on with the workspace's agent, with no choice to make.",
    );
  }
  const found = deps.agents.continuationChoices(session);
  const original = (await isAdministrator(deps.storage.repos, userId)) ? found.original : ADMINISTRATOR_ONLY;
  const choice = (why: string | null) => ({
    possible: found.blocked === null && why === null,
    ...(why === null ? {} : { why }),
  });
  return {
    cli: source.kind,
    ...(found.blocked === null ? {} : { blocked: found.blocked }),
    original: { ...choice(original), ...(source.cwd === undefined ? {} : { folder: source.cwd }) },
    sandbox: {
      ...choice(found.sandbox),
      ...(session.repository === undefined ? {} : { repository: session.repository }),
    },
  };
}
