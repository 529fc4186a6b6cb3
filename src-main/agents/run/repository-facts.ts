import type { AssistantMessage } from '../../../src-shared/sessions.js';
import type { Logger } from '../../clock.js';
import { pullRequestsReported } from '../../pull-requests/urls.js';
import type { SessionService } from '../../sessions/service.js';
import type { Repos } from '../../store/storage.js';
import { sandboxHead } from './branch-at-end.js';
import type { AgentSession } from '../types.js';

/** What recording a run's git facts needs: the session service, the store, a log. */
export interface FactsDeps {
  service: SessionService;
  repos: Repos;
  logger: Logger;
}

/**
 * A pull request the agent reports is recorded only when it belongs to the session's own
 * repository; one it merely names again keeps the status a refresh gave it.
 */
export async function recordReportedPullRequest(
  deps: FactsDeps,
  session: AgentSession,
  message: AssistantMessage,
): Promise<void> {
  const { own, others } = pullRequestsReported(message, session.repoUrl);
  for (const pr of others) {
    deps.logger.info(
      `Session ${session.id}: ignored ${pr.url}, which is not a pull request of ${session.repository ?? 'the session (it has no repository)'}.`,
    );
  }
  if (!own || (await deps.repos.sessions.find(session.id))?.prUrl === own.url) return;
  await deps.service.updatePullRequest(session.id, { number: own.number, url: own.url, status: 'open' });
}

/**
 * The branch the agent ended on becomes the session's branch (it may have switched); on a
 * detached HEAD the last known branch stays, and the transcript says so. Never fails a run.
 */
export async function recordBranchAtEnd(
  deps: FactsDeps,
  session: AgentSession,
  sandboxDir: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  if (!session.repoUrl) return;
  try {
    const head = await sandboxHead(sandboxDir, env);
    if (!head) return;
    const known = (await deps.repos.sessions.find(session.id))?.branch;
    if ('branch' in head) {
      if (head.branch !== known) await deps.service.setBranch(session.id, head.branch);
      return;
    }
    const text =
      `The agent left the repository at commit ${head.detachedAt}, on no branch; ` +
      (known ? `the session's branch stays ${known}.` : 'the session has no branch.');
    await deps.service.appendMessage(
      session.id,
      { type: 'assistant', message: { content: [{ type: 'text', text }] }, notice: 'info' },
      null,
    );
  } catch (err) {
    deps.logger.warn(`Could not read the branch of ${session.id}'s sandbox: ${String(err)}`);
  }
}
