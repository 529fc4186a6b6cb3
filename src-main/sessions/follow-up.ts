import type { AgentHost } from '../agents/host.js';
import { conflict } from '../errors.js';
import type { SessionRow } from '../store/sessions.js';
import type { SessionService } from './service.js';

/**
 * A person's follow-up: the run going on, if any, is stopped and its result written first;
 * then the prompt is appended (the session becomes active again) and passed to the agent.
 */
export function sendFollowUp(
  deps: { sessions: SessionService; agents: AgentHost },
  session: SessionRow,
  text: string,
  authorId: string,
): Promise<SessionRow> {
  const sessionId = session.id;
  // An imported session's conversation lives in the CLI's own files: it goes on there (its
  // file is followed, so the transcript here goes on too), not in a run of Session Desk's.
  if (session.source) {
    const resume = session.source.conversationId
      ? ` (its conversation id: ${session.source.conversationId})`
      : '';
    return Promise.reject(
      conflict(
        `This session was imported from ${session.source.kind}'s own files; continue it with the CLI's own ` +
          `resume in ${session.source.cwd ?? 'its working folder'}${resume}. The import follows the file, ` +
          'so what it adds appears here.',
      ),
    );
  }
  const message = { type: 'user' as const, message: { content: text } };
  return deps.agents.followUp(sessionId, text, (queuedPrompt) =>
    deps.sessions.appendMessage(sessionId, message, authorId, {
      agentStarts: true,
      status: 'active',
      ...(queuedPrompt ? { queuedPrompt } : {}),
    }),
  );
}
