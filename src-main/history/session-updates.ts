import type { SessionStatus } from '../../src-shared/sessions.js';
import { toSummary } from '../sessions/summary.js';
import type { HistoryFileRecord } from '../store/history.js';
import type { HistoryDeps } from './history-deps.js';
import { IMPORT_TURN_MS, Turns } from '../turns.js';

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

/** Sessions settled in one store write: a few ms of the event loop's time. */
const SETTLED_PER_WRITE = 100;

/**
 * Sessions still shown active whose files went quiet turn completed (or failed). A folder copied
 * from another machine, or a first import going stale, can make thousands of them at once: they
 * are written a hundred at a time, with a turn of the event loop handed over between the steps,
 * so requests never wait behind all of them (bench:history).
 */
export async function settleStatuses(
  deps: HistoryDeps,
  settling: Settling[],
  turnMs: number = IMPORT_TURN_MS,
): Promise<void> {
  const turns = new Turns(turnMs);
  // The run resuming a held session decides its status.
  const due = settling.filter(({ sessionId }) => !deps.holds?.has(sessionId));
  const still: Settling[] = [];
  for (const one of due) {
    await turns.pause();
    if ((await deps.storage.repos.sessions.find(one.sessionId))?.status === 'active') still.push(one);
  }
  for (let from = 0; from < still.length; from += SETTLED_PER_WRITE) {
    await turns.pause();
    const settled = await deps.storage.write(async (tx) => {
      const done: string[] = [];
      for (const { sessionId, failed } of still.slice(from, from + SETTLED_PER_WRITE)) {
        const row = await tx.sessions.find(sessionId);
        if (!row || row.status !== 'active') continue;
        const status: SessionStatus = failed ? 'failed' : 'completed';
        await tx.sessions.update(sessionId, { status }, row.updatedAt);
        await tx.history.setSessionFacts(sessionId, { updatedAt: row.updatedAt });
        done.push(sessionId);
      }
      return done;
    });
    for (const sessionId of settled) {
      await turns.pause();
      await publish(deps, sessionId, false);
    }
  }
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
