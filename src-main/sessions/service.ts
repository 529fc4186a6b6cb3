import type {
  Isolation,
  Message,
  ResultMessage,
  SessionStatus,
  SessionSummary,
  Task,
} from '../../src-shared/sessions.js';
import type { AgentKind } from '../../src-shared/constants.js';
import { modelsFor } from '../../src-shared/agent-models.js';
import { closeOpenTasks } from '../agents/agent-events.js';
import type { Clock, Logger } from '../clock.js';
import { silentLogger } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import { toSummary } from './summary.js';
import type { SessionRow } from '../store/session-row.js';
import type { RunRecord } from '../store/session-runs.js';
import type { Repos, Storage } from '../store/storage.js';
import type { QueuedRun } from '../store/runs.js';
import { bootId, startTimeOf } from '../store/lock.js';
import { newSession, type SessionDraft } from './new-session.js';
import { withSessionModel } from './run-cost.js';

export interface PullRequestUpdate {
  number: number;
  url: string;
  status: 'draft' | 'open' | 'merged' | 'closed';
  /** When it was merged; defaults to now when the status becomes merged. */
  mergedAt?: string;
}

/**
 * Every change to a session goes through here, from the API and from agents alike: one
 * durable write, then the matching live event. Events are published only after the write
 * is on disk, so a client never sees what a crash could take back.
 */
export function createSessionService(deps: {
  storage: Storage;
  clock: Clock;
  events: EventBus;
  /** Where a session's end is told (finished, failed, stopped). */
  logger?: Logger;
}) {
  const { storage, clock, events } = deps;
  const logger = deps.logger ?? silentLogger;
  const now = () => clock.now().toISOString();
  /** Sessions being stopped on request, with the text of the result the stop will write. */
  const stopping = new Map<string, string>();
  /**
   * Sessions given a final status (a PATCH) while their run was going: that status stands,
   * whatever the run's own outcome turns out to be when it ends.
   */
  const statusSetDuringRun = new Set<string>();

  async function summary(tx: Repos, id: string): Promise<SessionRow> {
    const row = await tx.sessions.find(id);
    if (!row) throw new Error(`session ${id} vanished`);
    return row;
  }

  function publishUpdated(row: SessionRow): void {
    events.publish(row.workspaceId, {
      type: 'session.updated',
      sessionId: row.id,
      session: toSummary(row, 'both'),
    });
  }

  /** A run's end, told once it is durable: the status it led to, or who stopped it. */
  function logEnd(row: SessionRow, result: ResultMessage, status: SessionStatus | null): void {
    const fields = { event: 'session.finished', sessionId: row.id, status: row.status };
    if (result.stopped) {
      logger.info(`session ${row.id}: ${result.result}`, { ...fields, stopped: true });
    } else if (status !== null && row.status === 'failed') {
      const why = result.result.length > 200 ? `${result.result.slice(0, 199)}…` : result.result;
      logger.warn(`session ${row.id} failed: ${why}`, fields);
    } else if (status !== null) {
      logger.info(`session ${row.id} ${row.status}`, fields);
    }
  }

  return {
    /**
     * Creates a session: its id, its title (from the first message) and, unless asked for,
     * the model: the specification's default (claude-opus-4-6) unless the workspace's agent
     * runs other models, so a Codex or Gemini CLI workspace gets that CLI's default. Read from
     * the workspace's own setting (no file read per create); without one the agent is the
     * demo or the environment's command, whose default is the specification's.
     *
     * With `agentStarts`, it is marked as worked on by an agent in the same write, so a crash
     * before the agent starts still leaves it for restart recovery to close.
     */
    async create(
      draft: Omit<SessionDraft, 'model' | 'firstPrompt'> & { model?: string | undefined },
      options: { agentStarts?: boolean } = {},
    ): Promise<SessionRow> {
      const input = newSession({
        ...draft,
        model:
          draft.model ??
          modelsFor((await storage.repos.workspaces.settings(draft.workspaceId))?.agent ?? 'demo')
            .defaultModel,
      });
      const row = await storage.write(async (tx) => {
        await tx.sessions.insert({ ...input, createdAt: now() });
        if (options.agentStarts) await tx.sessions.setAgentState(input.id, 'running');
        return summary(tx, input.id);
      });
      events.publish(row.workspaceId, {
        type: 'session.created',
        sessionId: row.id,
        session: toSummary(row, 'both'),
      });
      if (input.initialMessage !== undefined) {
        events.publish(row.workspaceId, {
          type: 'message.added',
          sessionId: row.id,
          index: 0,
          message: { type: 'user', message: { content: input.initialMessage } },
        });
      }
      return row;
    },

    async update(id: string, changes: { title?: string; status?: SessionStatus }): Promise<SessionRow> {
      const row = await storage.write(async (tx) => {
        // Decided inside the write: writes apply in the order they are made, so whichever of
        // this and the run's end comes second sees the other.
        if (changes.status !== undefined && changes.status !== 'active') {
          if ((await tx.sessions.agentState(id)) === 'running') statusSetDuringRun.add(id);
        }
        await tx.sessions.update(id, changes, now(), { requested: true });
        return summary(tx, id);
      });
      publishUpdated(row);
      return row;
    },

    /** Appends a message; `authorId` is set for a person's prompt, null for the agent's output. */
    async appendMessage(
      id: string,
      message: Message,
      authorId: string | null,
      extra: {
        status?: SessionStatus;
        agentStarts?: boolean;
        /** For a session whose run is queued: the prompt that run will now pass. */
        queuedPrompt?: { mode: QueuedRun['mode']; prompt: string };
      } = {},
    ) {
      const { row, seq } = await storage.write(async (tx) => {
        const current = await summary(tx, id);
        const seq = await tx.sessions.appendMessage(id, current.workspaceId, message, authorId, now());
        if (extra.status) await tx.sessions.update(id, { status: extra.status }, now());
        const queued = (await tx.sessions.agentState(id)) === 'queued';
        if (queued && extra.queuedPrompt) {
          await tx.runs.setQueuedPrompt(id, extra.queuedPrompt.mode, extra.queuedPrompt.prompt);
        }
        // A prompt that an agent will answer marks the session as worked on in the same write.
        if (extra.agentStarts && !queued) await tx.sessions.setAgentState(id, 'running');
        return { row: await summary(tx, id), seq };
      });
      events.publish(row.workspaceId, { type: 'message.added', sessionId: id, index: seq - 1, message });
      publishUpdated(row);
      return row;
    },

    async replaceTasks(id: string, tasks: Task[]): Promise<void> {
      const workspaceId = await storage.write(async (tx) => {
        await tx.sessions.replaceTasks(id, tasks);
        return (await summary(tx, id)).workspaceId;
      });
      events.publish(workspaceId, { type: 'tasks.changed', sessionId: id, tasks });
    },

    async setBranch(id: string, branch: string): Promise<void> {
      publishUpdated(
        await storage.write(async (tx) => {
          await tx.sessions.setBranch(id, branch, now());
          return summary(tx, id);
        }),
      );
    },

    /** The one path for pull-request facts: what agents report, and what gh opens and reads. */
    async updatePullRequest(id: string, pr: PullRequestUpdate): Promise<void> {
      publishUpdated(
        await storage.write(async (tx) => {
          await tx.sessions.updatePullRequest(
            id,
            { ...pr, ...(pr.mergedAt ? {} : { mergedAt: now() }) },
            now(),
          );
          return summary(tx, id);
        }),
      );
    },

    /**
     * A run starts: the session is marked as worked on by an agent of `kind` (the session's
     * `agent`) and leaves the queue if it waited there. A move out of the queue, or to another
     * agent (or sandbox), is published: a client may have read the session before this write (on
     * a team server the create answer goes out before the run starts) and must not wait for the
     * run's first message to learn which agent works on it.
     */
    async runStarts(
      id: string,
      kind: AgentKind,
      isolation: Isolation | null = null,
      acpAgent: string | null = null,
    ): Promise<void> {
      const { row, changed } = await storage.write(async (tx) => {
        const before = await summary(tx, id);
        await tx.runs.dequeue(id);
        await tx.sessions.setAgentState(id, 'running');
        await tx.sessions.setAgentKind(id, kind, isolation, acpAgent);
        const row = await summary(tx, id);
        const changed =
          before.agentState === 'queued' ||
          before.agentKind !== row.agentKind ||
          before.acpAgent !== row.acpAgent ||
          before.isolation !== row.isolation;
        return { row, changed };
      });
      if (changed) publishUpdated(row);
    },

    /** A run waits for a place: the session shows as queued until it starts. */
    async queueRun(run: QueuedRun): Promise<void> {
      publishUpdated(
        await storage.write(async (tx) => {
          await tx.runs.dequeue(run.sessionId);
          await tx.runs.enqueue(run);
          await tx.sessions.setAgentState(run.sessionId, 'queued');
          return summary(tx, run.sessionId);
        }),
      );
    },

    /** Records the process group a run started, with what identifies its leader. */
    async recordProcess(id: string, pgid: number): Promise<void> {
      const startTime = startTimeOf(pgid);
      const boot = bootId();
      await storage.write(
        async (tx) =>
          await tx.runs.recordProcess(
            {
              sessionId: id,
              pgid,
              ...(startTime === null ? {} : { startTime }),
              ...(boot === null ? {} : { bootId: boot }),
            },
            now(),
          ),
      );
    },

    /** Forgets recorded process groups once they have been ended. */
    async forgetProcesses(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await storage.write(async (tx) => {
        for (const id of ids) await tx.runs.forgetProcess(id);
      });
    },

    /** The agent CLI's conversation id, kept so that a follow-up can resume it. */
    async setConversation(id: string, kind: AgentKind, conversationId: string): Promise<void> {
      await storage.write((tx) => tx.sessions.setConversation(id, kind, conversationId));
    },

    /** A run's usage: recorded, and added to the session's totals. */
    async recordRun(id: string, run: Omit<RunRecord, 'endedAt'>): Promise<void> {
      publishUpdated(
        await storage.write(async (tx) => {
          const session = await summary(tx, id);
          await tx.sessions.recordRun(id, session.workspaceId, {
            ...withSessionModel(run, session.model),
            endedAt: now(),
          });
          return summary(tx, id);
        }),
      );
    },

    /**
     * Until `release` is called, the result of this session's run whose text is `text` is a
     * stop's, and `finish` marks it `stopped: true`. The agent host writes that result; this
     * is how it learns the run was stopped on request rather than ended for another reason.
     */
    expectStop(id: string, text: string): { release: () => void } {
      stopping.set(id, text);
      return { release: () => stopping.get(id) === text && stopping.delete(id) };
    },

    /**
     * Ends a run (or a queued one that never started): the result message, the status it
     * leads to, and the agent marked idle, unless another run takes over at once (a
     * follow-up), which keeps the mark. With `outcome`, the status is the run's own outcome,
     * which yields to a status someone set while the run was going.
     */
    async finish(
      id: string,
      result: ResultMessage,
      status: SessionStatus | null,
      options: { keepRunning?: boolean; outcome?: boolean } = {},
    ): Promise<SessionRow> {
      if (stopping.get(id) === result.result) result = { ...result, stopped: true };
      const { row, seq, closedTasks } = await storage.write(async (tx) => {
        const current = await summary(tx, id);
        const seq = await tx.sessions.appendMessage(id, current.workspaceId, result, null, now());
        const overruled = options.outcome === true && statusSetDuringRun.has(id);
        statusSetDuringRun.delete(id);
        if (status && !overruled) await tx.sessions.update(id, { status }, now());
        await tx.runs.dequeue(id);
        await tx.runs.forgetProcess(id);
        if (!options.keepRunning) await tx.sessions.setAgentState(id, null);
        // Nobody works on a task once its run is over, whatever the agent last said.
        const closedTasks = closeOpenTasks(await tx.sessions.tasks(id));
        if (closedTasks) await tx.sessions.replaceTasks(id, closedTasks);
        return { row: await summary(tx, id), seq, closedTasks };
      });
      events.publish(row.workspaceId, {
        type: 'message.added',
        sessionId: id,
        index: seq - 1,
        message: result,
      });
      if (closedTasks)
        events.publish(row.workspaceId, { type: 'tasks.changed', sessionId: id, tasks: closedTasks });
      publishUpdated(row);
      logEnd(row, result, status);
      return row;
    },

    toSummary(row: SessionRow, previews: 'both' | 'first' | 'none'): SessionSummary {
      return toSummary(row, previews);
    },
  };
}
export type SessionService = ReturnType<typeof createSessionService>;
