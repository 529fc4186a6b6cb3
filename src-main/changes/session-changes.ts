import type { SessionChangesResponse } from '../../src-shared/changes.js';
import { sandboxPath } from '../agents/sandbox.js';
import type { Clock } from '../clock.js';
import type { Repositories } from '../store/repositories.js';
import { sandboxChanges } from './sandbox-changes.js';

export interface SessionChanges {
  /** A session's changes, computed afresh; null when there is no such session. */
  of(sessionId: string): Promise<SessionChangesResponse | null>;
}

/**
 * Computes changes on request, from the sandbox as it is now. Requests for a session that
 * arrive while its comparison is running share that one run of git.
 */
export function createSessionChanges(deps: {
  repos: Repositories;
  clock: Clock;
  /** The sandboxes folder (checked: outside the data directory). */
  sandboxRoot: () => string;
  env: NodeJS.ProcessEnv;
}): SessionChanges {
  const running = new Map<string, Promise<SessionChangesResponse | null>>();

  async function compute(sessionId: string): Promise<SessionChangesResponse | null> {
    const input = deps.repos.sessions.agentInput(sessionId);
    if (!input) return null;
    if (input.repoUrl === undefined) {
      return {
        available: false,
        reason: 'no_repository',
        message: 'This session has no repository, so there are no changes to show.',
      };
    }
    return sandboxChanges({
      dir: sandboxPath(deps.sandboxRoot(), sessionId),
      baseBranch: input.baseBranch,
      env: deps.env,
      now: deps.clock.now(),
    });
  }

  return {
    of(sessionId) {
      const already = running.get(sessionId);
      if (already) return already;
      const run = compute(sessionId).finally(() => running.delete(sessionId));
      running.set(sessionId, run);
      return run;
    },
  };
}
