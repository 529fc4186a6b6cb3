import { CLI_NAMES, type ResultMessage } from '../../src-shared/sessions.js';
import type { AgentHost } from '../agents/run/host.js';
import { conflict } from '../errors.js';
import type { SessionRow } from '../store/session-row.js';
import type { SessionService } from './service.js';

/**
 * Stops a session on request: a running agent is stopped (a queued run leaves the queue) and
 * its result says who stopped it, marked `stopped: true`; an active session with no agent
 * running (one an older version left active) is closed the same way. The session ends
 * `completed`: a stop is a decision, not a failure. Nothing active: 409, so a second click
 * changes nothing; an imported session its CLI goes on with in the person's terminal: 409.
 * Done in the process running the session's agent, if any (commands.ts sends it there).
 */
export async function stopSession(
  deps: { service: SessionService; agents: AgentHost; find: (id: string) => Promise<SessionRow | null> },
  row: SessionRow,
  stoppedBy: string,
): Promise<SessionRow> {
  const text = `Stopped by ${stoppedBy}.`;
  if (deps.agents.isActive(row.id)) {
    const marker = deps.service.expectStop(row.id, text);
    try {
      await deps.agents.stop(row.id, { text, success: true, status: 'completed' });
    } finally {
      marker.release();
    }
    return (await deps.find(row.id)) ?? row;
  }
  if (row.status !== 'active') throw conflict('Nothing is running in this session: it is already ended');
  if (row.source) {
    // Its CLI runs in the person's terminal: a "Stopped" result here would stop nothing there,
    // and the terminal's next lines would land after it.
    throw conflict(
      `This session goes on in ${CLI_NAMES[row.source.kind]} in your terminal, not under Session Desk, which cannot stop it: stop it there. ` +
        `To show it as finished here, set its status instead: PATCH /api/sessions/${row.id} with {"status": "completed"} (Mark as finished in the dashboard). ` +
        'A new line from the terminal makes it active again.',
    );
  }
  const result: ResultMessage = {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: text,
    duration_ms: 0,
    num_turns: 0,
    stopped: true,
  };
  return deps.service.finish(row.id, result, 'completed');
}
