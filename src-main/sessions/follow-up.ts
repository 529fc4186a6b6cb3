import type { AgentHost } from '../agents/run/host.js';
import type { TranscriptReview } from '../../src-shared/review.js';
import type { FollowUpBody } from '../../src-shared/sessions.js';
import { resolve } from 'node:path';
import { requireAdministrator } from '../accounts/administrator.js';
import { badRequest, conflict } from '../errors.js';
import type { Repos } from '../store/storage.js';
import type { SessionRow } from '../store/session-row.js';
import type { SessionService } from './service.js';

/**
 * An agent works in a person's own folder only when the administrator asks, naming the folder
 * they confirm: a confirmation given for one folder never sends the agent to another.
 */
async function confirmOriginalFolder(
  repos: Repos,
  session: SessionRow,
  body: FollowUpBody,
  authorId: string,
): Promise<void> {
  await requireAdministrator(
    repos,
    authorId,
    'continue a session in a folder of this machine (continue it in a sandbox instead)',
  );
  const folder = session.source?.cwd;
  if (body.continueFolder === undefined) {
    throw badRequest(
      `Name the folder you confirm the agent may work in: "continueFolder": ${JSON.stringify(folder ?? '')}`,
      [{ path: 'body.continueFolder', message: 'is required with "continueIn": "original"' }],
    );
  }
  if (folder === undefined || resolve(body.continueFolder) !== resolve(folder)) {
    throw conflict(
      `The folder you confirmed, ${body.continueFolder}, is not the one this session runs in${folder ? ` (${folder})` : ''}; nothing was sent.`,
    );
  }
}

export interface FollowUpDeps {
  sessions: SessionService;
  agents: AgentHost;
  repos: Repos;
}

/**
 * A person's follow-up: the run going on, if any, is stopped and its result written first;
 * then the prompt is appended (the session becomes active again) and passed to the agent.
 * A review's follow-up keeps its comments beside the text (`review`), for the dashboard.
 */
export async function sendFollowUp(
  deps: FollowUpDeps,
  session: SessionRow,
  body: FollowUpBody,
  authorId: string,
  review?: TranscriptReview,
): Promise<SessionRow> {
  const sessionId = session.id;
  const text = body.content;
  // An imported session's conversation lives in the CLI's own files: it goes on with that CLI's
  // resume, in the folder it ran in or in a fresh clone, as the follow-up says (checked first).
  if (session.source) {
    if (body.continueIn === 'original') await confirmOriginalFolder(deps.repos, session, body, authorId);
    else if (body.continueFolder !== undefined)
      throw badRequest('continueFolder goes with "continueIn": "original"', [
        { path: 'body.continueFolder', message: 'only with "continueIn": "original"' },
      ]);
    deps.agents.planContinuation(session, body.continueIn);
  } else if (body.continueIn !== undefined || body.continueFolder !== undefined) {
    throw badRequest("continueIn is only for a session imported from an agent CLI's own files", [
      { path: 'body.continueIn', message: 'this session was not imported' },
    ]);
  }
  const message = { type: 'user' as const, message: { content: text }, ...(review ? { review } : {}) };
  return deps.agents.followUp(
    sessionId,
    text,
    (queuedPrompt) =>
      deps.sessions.appendMessage(sessionId, message, authorId, {
        agentStarts: true,
        status: 'active',
        ...(queuedPrompt ? { queuedPrompt } : {}),
      }),
    session.source && body.continueIn
      ? {
          continueIn: body.continueIn,
          // The status its import gave; one a run of ours set is not the import's to keep.
          ...(deps.agents.isActive(sessionId) ? {} : { statusBefore: session.status }),
        }
      : {},
  );
}
