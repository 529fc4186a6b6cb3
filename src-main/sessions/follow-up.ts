import type { AgentHost } from '../agents/host.js';
import type { FollowUpBody } from '../../src-shared/sessions.js';
import { badRequest } from '../errors.js';
import type { SessionRow } from '../store/sessions.js';
import type { SessionService } from './service.js';

/**
 * A person's follow-up: the run going on, if any, is stopped and its result written first;
 * then the prompt is appended (the session becomes active again) and passed to the agent.
 */
export function sendFollowUp(
  deps: { sessions: SessionService; agents: AgentHost },
  session: SessionRow,
  body: FollowUpBody,
  authorId: string,
): Promise<SessionRow> {
  const sessionId = session.id;
  const text = body.content;
  // An imported session's conversation lives in the CLI's own files: it goes on with that CLI's
  // resume, in the folder it ran in or in a fresh clone, as the follow-up says (checked first).
  if (session.source) {
    try {
      deps.agents.planContinuation(session, body.continueIn);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  } else if (body.continueIn !== undefined) {
    return Promise.reject(
      badRequest("continueIn is only for a session imported from an agent CLI's own files", [
        { path: 'body.continueIn', message: 'this session was not imported' },
      ]),
    );
  }
  const message = { type: 'user' as const, message: { content: text } };
  return deps.agents.followUp(
    sessionId,
    text,
    (queuedPrompt) =>
      deps.sessions.appendMessage(sessionId, message, authorId, {
        agentStarts: true,
        status: 'active',
        ...(queuedPrompt ? { queuedPrompt } : {}),
      }),
    session.source && body.continueIn ? { continueIn: body.continueIn } : {},
  );
}
