import {
  ApprovalDecidedBySchema,
  DecideApprovalBodySchema,
  type Approval,
  type ApprovalDecidedBy,
  type DecideApprovalBody,
} from '../../src-shared/approvals.js';
import {
  FollowUpBodySchema,
  UpdateSessionBodySchema,
  type CreateSessionBody,
  type FollowUpBody,
  type SessionStatus,
  type UpdateSessionBody,
} from '../../src-shared/sessions.js';
import { ReviewBodySchema, type ReviewBody } from '../../src-shared/review.js';
import type { Approvals } from '../approvals/service.js';
import type { SessionChanges } from '../changes/session-changes.js';
import type { ApprovalRecord } from '../store/approvals.js';
import type { AgentHost } from '../agents/run/host.js';
import type { RunRequest } from '../agents/run/run-requests.js';
import type { Logger } from '../clock.js';
import { notFound } from '../errors.js';
import type { Repos } from '../store/storage.js';
import type { SessionRow } from '../store/session-row.js';
import { sendFollowUp } from './follow-up.js';
import { sendReview } from './review.js';
import type { SessionService } from './service.js';
import { stopSession } from './stop.js';

/** Who asks: a signed-in person, or a script with a workspace's API key. */
export type Requester = { kind: 'user'; userId: string } | { kind: 'apiKey' };

/**
 * What people and scripts ask of sessions, each one call: the session service records, the
 * agent host runs, and this puts the two in order (a session exists, durably, before its
 * agent starts; a run is stopped before the status that ends it is answered).
 *
 * A stop, a follow-up (a review too), a final status and a decision on what an agent asked are
 * done by the server process
 * running the session's agent, whichever process was asked (`AgentHost.atRun`): the one asked
 * checks that the caller may, the one running it reads the session and the request afresh.
 */
export function createSessionCommands(deps: {
  service: SessionService;
  agents: AgentHost;
  approvals: Approvals;
  repos: Repos;
  /** A session's changes, read where its sandbox is: what a review's comments must name. */
  changes: SessionChanges;
  logger: Logger;
}) {
  const { service, agents, approvals, repos, changes, logger } = deps;

  async function existing(sessionId: string): Promise<SessionRow> {
    const row = await repos.sessions.find(sessionId);
    if (!row) throw notFound('Session not found');
    return row;
  }

  /** A request about a session's run, done here: its session (and request) read now. */
  async function perform(request: RunRequest): Promise<SessionRow | Approval> {
    switch (request.kind) {
      case 'update': {
        const { sessionId, changes } = request;
        await existing(sessionId);
        const updated = await service.update(sessionId, changes);
        const { status } = changes;
        if (status !== undefined && status !== 'active' && agents.isActive(sessionId)) {
          await agents.stop(sessionId, {
            text: `Stopped: the session was marked ${status}.`,
            success: status === 'completed',
          });
        }
        return updated;
      }
      case 'stop':
        return stopSession(
          { service, agents, find: (id) => repos.sessions.find(id) },
          await existing(request.sessionId),
          request.stoppedBy,
        );
      case 'follow-up':
        return sendFollowUp(
          { sessions: service, agents, repos },
          await existing(request.sessionId),
          request.body,
          request.authorId,
        );
      case 'review':
        return sendReview(
          { sessions: service, agents, repos, changes },
          await existing(request.sessionId),
          request.body,
          request.authorId,
        );
      case 'decide': {
        const approval = await approvals.find(request.approvalId);
        if (approval.sessionId !== request.sessionId) throw notFound('There is no such request');
        return approvals.decide(approval, request.body, request.by);
      }
    }
  }

  // What another server process sends: checked there, and its form checked again here.
  agents.answerRequests((request) =>
    perform(
      request.kind === 'update'
        ? { ...request, changes: changesOf(UpdateSessionBodySchema.parse(request.changes)) }
        : request.kind === 'follow-up'
          ? { ...request, body: FollowUpBodySchema.parse(request.body) }
          : request.kind === 'review'
            ? { ...request, body: ReviewBodySchema.parse(request.body) }
            : request.kind === 'decide'
              ? {
                  ...request,
                  body: DecideApprovalBodySchema.parse(request.body),
                  by: ApprovalDecidedBySchema.parse(request.by),
                }
              : request,
    ),
  );

  return {
    /** A new session in `workspaceId`, its agent started (or queued at the limit of runs at once). */
    async create(userId: string, workspaceId: string, body: CreateSessionBody): Promise<SessionRow> {
      const created = await service.create(
        {
          workspaceId,
          authorId: userId,
          initialMessage: body.initialMessage,
          repoUrl: body.repoUrl,
          baseBranch: body.baseBranch,
          model: body.model ?? (await agents.defaultModel(workspaceId)),
        },
        { agentStarts: true },
      );
      const author = (await repos.users.findById(userId))?.email ?? userId;
      const agent = (await agents.settingsFor(workspaceId)).settings.agent;
      logger.info(`session ${created.id} created by ${author} (${agent})`, {
        event: 'session.created',
        sessionId: created.id,
        workspaceId,
        authorId: userId,
        agent,
        model: created.model,
      });
      await agents.start(created.id);
      return (await repos.sessions.find(created.id)) ?? created;
    },

    /** Changes the title and/or status; a final status stops the agent working on it. */
    async update(row: SessionRow, changes: UpdateSessionBody): Promise<SessionRow> {
      const wanted = changesOf(changes);
      if (Object.keys(wanted).length === 0) return row;
      const { status } = wanted;
      const request: RunRequest = { kind: 'update', sessionId: row.id, changes: wanted };
      // A final status ends the run, and stays when it ends: the run's process sets it.
      if (status === undefined || status === 'active') return perform(request) as Promise<SessionRow>;
      return agents.atRun(request, () => perform(request)) as Promise<SessionRow>;
    },

    /** A person's follow-up, passed to the session's agent (follow-up.ts). */
    followUp(row: SessionRow, body: FollowUpBody, authorId: string): Promise<SessionRow> {
      const request: RunRequest = { kind: 'follow-up', sessionId: row.id, body, authorId };
      return agents.atRun(request, () => perform(request)) as Promise<SessionRow>;
    },

    /**
     * A person's comments on lines of the session's changes, sent to its agent as one
     * follow-up (review.ts); checked by the process running the agent, against its sandbox.
     */
    review(row: SessionRow, body: ReviewBody, authorId: string): Promise<SessionRow> {
      const request: RunRequest = { kind: 'review', sessionId: row.id, body, authorId };
      return agents.atRun(request, () => perform(request)) as Promise<SessionRow>;
    },

    /** Stops the session's agent; its result says who stopped it. */
    async stop(row: SessionRow, requester: Requester): Promise<SessionRow> {
      const stoppedBy =
        requester.kind === 'user'
          ? ((await repos.users.findById(requester.userId))?.name ?? 'a member')
          : 'a script (API key)';
      const request: RunRequest = { kind: 'stop', sessionId: row.id, stoppedBy };
      return agents.atRun(request, () => perform(request)) as Promise<SessionRow>;
    },

    /** A decision on what a session's agent asked, passed to the run waiting for it. */
    decide(approval: ApprovalRecord, body: DecideApprovalBody, by: ApprovalDecidedBy): Promise<Approval> {
      const request: RunRequest = {
        kind: 'decide',
        sessionId: approval.sessionId,
        approvalId: approval.id,
        body,
        by,
      };
      return agents.atRun(request, () => perform(request)) as Promise<Approval>;
    },
  };
}
export type SessionCommands = ReturnType<typeof createSessionCommands>;

/** The changes an update asks for: the fields it sends, a title trimmed. */
function changesOf(body: UpdateSessionBody): { title?: string; status?: SessionStatus } {
  return {
    ...(body.title === undefined ? {} : { title: body.title.trim() }),
    ...(body.status === undefined ? {} : { status: body.status }),
  };
}
