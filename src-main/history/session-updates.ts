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
  const due = settling.filter(
    // The run resuming a held session decides its status.
    ({ sessionId }) =>
      !deps.holds?.has(sessionId) && deps.repos.sessions.find(sessionId)?.status === 'active',
  );
  if (due.length === 0) return;
  const settled = await deps.store.write(() =>
    due.flatMap(({ sessionId, failed }) => {
      const row = deps.repos.sessions.find(sessionId);
      if (!row || row.status !== 'active') return [];
      const status: SessionStatus = failed ? 'failed' : 'completed';
      deps.repos.sessions.update(sessionId, { status }, row.updatedAt);
      deps.repos.history.setSessionFacts(sessionId, { updatedAt: row.updatedAt });
      return [sessionId];
    }),
  );
  for (const sessionId of settled) publish(deps, sessionId, false);
}

/** Tells the running server's clients that an imported session was created or changed. */
export function publish(deps: HistoryDeps, sessionId: string, created: boolean): void {
  if (!deps.events) return;
  const row = deps.repos.sessions.find(sessionId);
  if (!row) return;
  deps.events.publish(row.workspaceId, {
    type: created ? 'session.created' : 'session.updated',
    sessionId,
    session: toSummary(row, 'both'),
  });
}
