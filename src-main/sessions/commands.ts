import type { FollowUpBody } from '../../src-shared/sessions.js';
import type { CreateSessionBody, SessionStatus } from '../../src-shared/sessions.js';
import type { AgentHost } from '../agents/run/host.js';
import type { Logger } from '../clock.js';
import type { Repos } from '../store/storage.js';
import type { SessionRow } from '../store/session-row.js';
import { sendFollowUp } from './follow-up.js';
import type { SessionService } from './service.js';
import { stopSession } from './stop.js';

/** Who asks: a signed-in person, or a script with a workspace's API key. */
export type Requester = { kind: 'user'; userId: string } | { kind: 'apiKey' };

/**
 * What people and scripts ask of sessions, each one call: the session service records, the
 * agent host runs, and this puts the two in order (a session exists, durably, before its
 * agent starts; a run is stopped before the status that ends it is answered).
 */
export function createSessionCommands(deps: {
  service: SessionService;
  agents: AgentHost;
  repos: Repos;
  logger: Logger;
}) {
  const { service, agents, repos, logger } = deps;

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
    async update(
      row: SessionRow,
      changes: { title?: string | undefined; status?: SessionStatus | undefined },
    ): Promise<SessionRow> {
      const { title, status } = changes;
      const wanted = {
        ...(title === undefined ? {} : { title: title.trim() }),
        ...(status === undefined ? {} : { status }),
      };
      if (Object.keys(wanted).length === 0) return row;
      const updated = await service.update(row.id, wanted);
      if (status !== undefined && status !== 'active' && agents.isActive(row.id)) {
        await agents.stop(row.id, {
          text: `Stopped: the session was marked ${status}.`,
          success: status === 'completed',
        });
      }
      return updated;
    },

    followUp(row: SessionRow, body: FollowUpBody, authorId: string): Promise<SessionRow> {
      return sendFollowUp({ sessions: service, agents, repos }, row, body, authorId);
    },

    /** Stops the session's agent; its result says who stopped it. */
    async stop(row: SessionRow, requester: Requester): Promise<SessionRow> {
      const stoppedBy =
        requester.kind === 'user'
          ? ((await repos.users.findById(requester.userId))?.name ?? 'a member')
          : 'a script (API key)';
      return stopSession({ service, agents, find: (id) => repos.sessions.find(id) }, row, stoppedBy);
    },
  };
}
export type SessionCommands = ReturnType<typeof createSessionCommands>;
