import type { ChangesUnavailable, SessionChangesResponse } from '../../src-shared/changes.js';
import { CLI_NAMES, type PushedFrom, type SessionSource } from '../../src-shared/sessions.js';
import { sandboxPath } from '../agents/sandbox/session-folder.js';
import type { Clock } from '../clock.js';
import type { Repos } from '../store/storage.js';
import { sandboxChanges } from './sandbox-changes.js';

/**
 * An imported session's changes are in the folder its CLI ran in, the person's own work tree,
 * mixed with whatever else they changed there: where they are is said, and they are not read.
 */
function inOwnFolder(source: SessionSource): ChangesUnavailable {
  const cli = CLI_NAMES[source.kind];
  if (source.cwd === undefined) {
    return {
      available: false,
      reason: 'own_folder',
      message: `This session ran in ${cli} outside Session Desk: its changes are in the folder it ran in, which ${cli} did not record.`,
    };
  }
  return {
    available: false,
    reason: 'own_folder',
    folder: source.cwd,
    message: `This session ran in ${cli} in your own folder ${source.cwd}: its changes are there, beside anything else changed in that folder. Session Desk shows the changes of a sandbox it runs.`,
  };
}

/** A pushed session's changes are on the desktop that pushed it: which, and in what folder. */
function onTheDesktop(pushed: PushedFrom): ChangesUnavailable {
  const from = `This session was pushed here from ${pushed.machine}`;
  return {
    available: false,
    reason: 'pushed',
    ...(pushed.folder === undefined
      ? { message: `${from}: its changes are on that desktop, not on this server.` }
      : {
          folder: pushed.folder,
          message: `${from}, where it ran in ${pushed.folder}: its changes are there, not on this server.`,
        }),
  };
}

export interface SessionChanges {
  /** A session's changes, computed afresh; null when there is no such session. */
  of(sessionId: string): Promise<SessionChangesResponse | null>;
}

/**
 * Computes changes on request, from the sandbox as it is now. Requests for a session that
 * arrive while its comparison is running share that one run of git.
 */
export function createSessionChanges(deps: {
  repos: Repos;
  clock: Clock;
  /** The sandboxes folder (checked: outside the data directory). */
  sandboxRoot: () => string;
  env: NodeJS.ProcessEnv;
}): SessionChanges {
  const running = new Map<string, Promise<SessionChangesResponse | null>>();

  async function compute(sessionId: string): Promise<SessionChangesResponse | null> {
    const input = await deps.repos.sessions.agentInput(sessionId);
    if (!input) return null;
    const row = await deps.repos.sessions.find(sessionId);
    const source = row?.source;
    // The demo agent works in a clone of its sample project whatever repository the session names.
    const demo = row?.agentKind === 'demo';
    const pushed = row?.pushedFrom;
    if (input.repoUrl === undefined && !source && !demo && !pushed) {
      return {
        available: false,
        reason: 'no_repository',
        message: 'This session has no repository, so there are no changes to show.',
      };
    }
    const changes = await sandboxChanges({
      dir: sandboxPath(deps.sandboxRoot(), sessionId),
      baseBranch: input.baseBranch,
      env: deps.env,
      now: deps.clock.now(),
    });
    // An imported session has a sandbox only once it was continued in a fresh clone.
    if (source && !changes.available && changes.reason === 'no_sandbox') return inOwnFolder(source);
    // Pushed, and not continued here: its files stayed on the desktop it ran on.
    if (pushed && !changes.available && changes.reason === 'no_sandbox') return onTheDesktop(pushed);
    // The demo workspace's sample sessions were written with it, never run: they have no folder.
    if (!changes.available && changes.reason === 'no_sandbox' && demo) {
      return {
        ...changes,
        message:
          'A sample session of the demo: its transcript was written with the demo workspace, and no folder was made for it. Start a new session to watch the demo agent change files in a clone of its sample project.',
      };
    }
    return changes;
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
