import type { AgentHost } from '../agents/host.js';
import type { SessionRow } from '../store/sessions.js';
import type { SessionService } from './service.js';

/**
 * A person's follow-up: the run going on, if any, is stopped and its result written first;
 * then the prompt is appended (the session becomes active again) and passed to the agent.
 */
export function sendFollowUp(
  deps: { sessions: SessionService; agents: AgentHost },
  sessionId: string,
  text: string,
  authorId: string,
): Promise<SessionRow> {
  const message = { type: 'user' as const, message: { content: text } };
  return deps.agents.followUp(sessionId, text, (queuedPrompt) =>
    deps.sessions.appendMessage(sessionId, message, authorId, {
      agentStarts: true,
      status: 'active',
      ...(queuedPrompt ? { queuedPrompt } : {}),
    }),
  );
}
