import type { SessionStatus } from '../../src-shared/sessions.js';
import { toSummary } from '../sessions/summary.js';
import type { HistoryFileRecord } from '../store/history.js';
import type { HistoryDeps } from './history-deps.js';

/** A session shown active whose file has not been written for ACTIVE_WITHIN_MS. */
export interface Settling {
  sessionId: string;
  failed: boolean;
}

/** Whether the parser state saved for a file says its CLI recorded an error end. */
export function recordedFailure(file: HistoryFileRecord): boolean {
  try {
    return (JSON.parse(file.parserState ?? '{}') as { facts?: { failed?: boolean } }).facts?.failed === true;
  } catch {
    return false;
  }
}

/**
 * Sessions still shown active whose files went quiet turn completed (or failed), in one write:
 * a folder copied from another machine can make thousands of them at once.
 */
export async function settleStatuses(deps: HistoryDeps, settling: Settling[]): Promise<void> {
  // The run resuming a held session decides its status.
  const due = settling.filter(({ sessionId }) => !deps.holds?.has(sessionId));
  if (due.length === 0) return;
  const active = await Promise.all(
    due.map(async (one) =>
      (await deps.storage.repos.sessions.find(one.sessionId))?.status === 'active' ? one : null,
    ),
  );
  const still = active.filter((one) => one !== null);
  if (still.length === 0) return;
  const settled = await deps.storage.write(async (tx) => {
    const done: string[] = [];
    for (const { sessionId, failed } of still) {
      const row = await tx.sessions.find(sessionId);
      if (!row || row.status !== 'active') continue;
      const status: SessionStatus = failed ? 'failed' : 'completed';
      await tx.sessions.update(sessionId, { status }, row.updatedAt);
      await tx.history.setSessionFacts(sessionId, { updatedAt: row.updatedAt });
      done.push(sessionId);
    }
    return done;
  });
  for (const sessionId of settled) await publish(deps, sessionId, false);
}

/** Tells the running server's clients that an imported session was created or changed. */
export async function publish(deps: HistoryDeps, sessionId: string, created: boolean): Promise<void> {
  if (!deps.events) return;
  const row = await deps.storage.repos.sessions.find(sessionId);
  if (!row) return;
  deps.events.publish(row.workspaceId, {
    type: created ? 'session.created' : 'session.updated',
    sessionId,
    session: toSummary(row, 'both'),
  });
}
