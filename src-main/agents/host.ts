import type { ContinueIn, SessionStatus, Usage } from '../../src-shared/sessions.js';
import type { Logger } from '../clock.js';
import type { RunHolds } from '../history/run-holds.js';
import type { SessionService } from '../sessions/service.js';
import type { Repositories } from '../store/repositories.js';
import type { SessionRow } from '../store/sessions.js';
import type { QueuedRun } from '../store/runs.js';
import type { Store } from '../store/store.js';
import { roundedUsage } from './cli-agent.js';
import { CLI_KIND_SPECS, isCliKind } from './cli-kinds.js';
import { DEFAULT_AGENT_TIMEOUT_MS } from './command-agent.js';
import { lastRun, unfinishedToolResults, type LastRun } from './crashed-runs.js';
import { agentEnvironment } from './environment.js';
import {
  branchToClone,
  createContinuationRunner,
  planContinuation,
  type Continuation,
} from './imported-continuation.js';
import { NamedCommandsError } from './named-commands.js';
import { AgentSetupError, WorkspaceAgents } from './workspace-agents.js';
import { BRIDGE_PORT } from './network-bridge.js';
import { NetworkProxies, refusalNotices, type ProxyLease, type Refused } from './network-proxy.js';
import { endOrphans } from './orphans.js';
import { detectOsSandbox, installRoot, type Confinement, type OsSandbox } from './os-sandbox.js';
import { locateExecutable } from './programs.js';
import { recordBranchAtEnd, recordReportedPullRequest } from './repository-facts.js';
import { sandboxPath, SandboxError } from './sandbox.js';
import {
  checkSandboxRoot,
  defaultSandboxRoot,
  moveLegacySandboxes,
  SandboxRootError,
  secureSandboxRoot,
  secureSessionFolder,
} from './sandbox-root.js';
import {
  resultMessage,
  RunAborted,
  type AgentRunner,
  type AgentSession,
  type RunContext,
  type RunOutcome,
} from './types.js';

export { AgentSetupError };

export interface AgentConfig {
  /** Milliseconds between the demo agent's steps (0 in tests). */
  demoPaceMs: number;
  demoSeed?: number;
  /** From SESSIONDESK_AGENT_COMMAND: the command agent for workspaces without their own setting. */
  defaultCommand?: string[];
  /** Where sessions' sandboxes live (--sandbox-dir); by default beside the data directory. */
  sandboxRoot?: string;
  /** From SESSIONDESK_AGENT_ENV: more variables agents may see, beyond the allow-list. */
  agentEnvNames?: string[];
  /** The environment agent CLIs are found in and run with; the server's own when unset. */
  env?: NodeJS.ProcessEnv;
  /** Runs of agents that run programs going on at once; more wait in a queue (default 3). */
  maxRuns?: number;
}

const DEFAULT_MAX_RUNS = 3;

export interface StopReason {
  text: string;
  success: boolean;
  /** The status to set; none when the caller set it already (a PATCH) or a follow-up goes on. */
  status?: SessionStatus;
  /** Another run takes over at once: the session stays marked as worked on. */
  handOver?: boolean;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
  /** Counts against the limit of runs at once. */
  limited: boolean;
  /** Why it was stopped, when it was: becomes the result message. */
  stopReason?: StopReason;
}

/**
 * Runs agents for sessions: one run at a time per session, each started, followed up and
 * stopped from here. Everything a run produces goes through the session service, so it is
 * durable and visible through the API as it happens.
 */
export class AgentHost {
  private readonly running = new Map<string, Running>();
  /** Runs waiting for a place, first in line first (kept durably too, in run_queue). */
  private readonly queue: WaitingRun[] = [];
  /** The follow-up of each session being handled, so that the next waits for it. */
  private readonly followUps = new Map<string, Promise<void>>();
  private closed = false;
  private osSandboxFound: OsSandbox | undefined;
  private readonly proxies = new NetworkProxies(() => [this.deps.dataDir, this.sandboxRoot]);
  private readonly workspaces: WorkspaceAgents;

  constructor(
    private readonly deps: {
      service: SessionService;
      repos: Repositories;
      /** Where a crashed run's transcript is read from. */
      store: Store;
      dataDir: string;
      config: AgentConfig;
      logger: Logger;
      /** Holds the file of an imported session while a run of ours resumes its conversation. */
      history?: Pick<RunHolds, 'hold' | 'release'>;
    },
  ) {
    this.workspaces = new WorkspaceAgents({
      service: deps.service,
      repos: deps.repos,
      dataDir: deps.dataDir,
      config: deps.config,
      osSandbox: () => this.osSandbox,
      agentEnvironment: () => this.agentEnvironment(),
    });
  }

  private get maxRuns(): number {
    return this.deps.config.maxRuns ?? DEFAULT_MAX_RUNS;
  }

  /** The folder holding every session's sandbox: outside the data directory, checked. */
  get sandboxRoot(): string {
    return checkSandboxRoot(
      this.deps.config.sandboxRoot ?? defaultSandboxRoot(this.deps.dataDir),
      this.deps.dataDir,
    );
  }

  /**
   * At start: the sandboxes folder must be the user's own (refused otherwise; made private if
   * others could write to it); sandboxes an earlier version kept in the data directory move out.
   */
  prepareSandboxRoot(): void {
    secureSandboxRoot(this.sandboxRoot, this.deps.dataDir, this.deps.logger);
    moveLegacySandboxes(this.deps.dataDir, this.sandboxRoot, this.deps.logger);
  }

  /**
   * The operating-system sandbox agents' programs run in (bubblewrap on Linux), or why there is
   * none: looked for once, on the first run or question.
   */
  get osSandbox(): OsSandbox {
    this.osSandboxFound ??= detectOsSandbox(this.deps.config.env ?? process.env);
    return this.osSandboxFound;
  }

  /** The allow-listed environment agents run with (and git in their sandboxes). */
  agentEnvironment(): NodeJS.ProcessEnv {
    return agentEnvironment(this.deps.config.env ?? process.env, this.deps.config.agentEnvNames ?? []);
  }

  /** The commands the administrator defined, by name (read afresh: the CLI may change them). */
  namedCommands(): Record<string, string[]> {
    return this.workspaces.namedCommands();
  }

  /** The agent a workspace uses, and what this machine holds its runs in (WorkspaceAgents). */
  settingsFor(workspaceId: string): ReturnType<WorkspaceAgents['settingsFor']> {
    return this.workspaces.settingsFor(workspaceId);
  }

  /** The model a new session of the workspace gets when the person chose none. */
  defaultModel(workspaceId: string): string {
    return this.workspaces.defaultModel(workspaceId);
  }

  /**
   * Where the workspace lists the hosts its agents may reach (and a sandbox can hold them to
   * it): the run's proxy, and the bridge that runs its program, in its confinement.
   */
  private async limitNetwork(
    workspaceId: string,
    rules: Confinement,
    refused: Refused,
  ): Promise<ProxyLease | undefined> {
    const allowed = this.deps.repos.workspaces.settings(workspaceId)?.allowedHosts;
    if (!allowed || this.osSandbox.isolation !== 'sandbox') return undefined;
    const node = locateExecutable(
      { name: 'Node.js', program: 'node', envVar: 'SESSIONDESK_NODE_BIN' },
      {
        ...this.agentEnvironment(),
        SESSIONDESK_NODE_BIN: (this.deps.config.env ?? process.env).SESSIONDESK_NODE_BIN,
      },
    );
    if (!node.found) {
      throw new AgentSetupError(
        `This workspace lists the hosts its agents may reach, which needs Node.js in their sandbox: ${node.problem}`,
      );
    }
    const lease = await this.proxies.open(allowed, refused);
    rules.readable.push(installRoot(node.path));
    rules.network = { socket: lease.socket, port: BRIDGE_PORT, node: node.path };
    return lease;
  }

  /**
   * How a follow-up to a session imported from a CLI's files would go on (`where`), or an
   * AppError (409) saying why it cannot; checked before the prompt is written, and again
   * when the run starts.
   */
  planContinuation(session: SessionRow, where: ContinueIn | undefined): Continuation {
    return planContinuation(session, where, {
      env: this.agentEnvironment(),
      dataDir: this.deps.dataDir,
      sandboxRoot: this.sandboxRoot,
    });
  }

  /** Whether a run of the session is going or waiting for a place. */
  isActive(sessionId: string): boolean {
    return this.running.has(sessionId) || this.queue.some((q) => q.sessionId === sessionId);
  }

  /** Starts the agent on a new session's first prompt, or queues it (resolves once recorded). */
  start(sessionId: string): Promise<void> {
    return this.launch({ sessionId, mode: 'start', prompts: [] });
  }

  /**
   * Passes a follow-up to the session's agent, with `append` writing the person's message.
   * A run still going is stopped first, and its result written, before the message (the
   * prompt supersedes the run, which hands its place over); a queued run takes the prompt
   * in order after the ones it holds and keeps its place; a finished session is resumed.
   */
  followUp<T>(
    sessionId: string,
    text: string,
    append: (queuedPrompt?: { mode: QueuedRun['mode']; prompt: string }) => Promise<T>,
    options: { continueIn?: ContinueIn } = {},
  ): Promise<T> {
    // One follow-up of a session at a time, in the order they came.
    const previous = this.followUps.get(sessionId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const waiting = this.queue.find((q) => q.sessionId === sessionId);
      if (waiting) {
        waiting.prompts.push(text);
        return append({ mode: waiting.mode, prompt: joinPrompts(waiting.prompts) });
      }
      const handOver = this.running.get(sessionId)?.limited === true;
      await this.stop(sessionId, {
        text: 'Interrupted by a follow-up prompt.',
        success: true,
        handOver: true,
      });
      const appended = await append();
      await this.launch(
        {
          sessionId,
          mode: 'follow-up',
          prompts: [text],
          ...(options.continueIn ? { continueIn: options.continueIn } : {}),
        },
        { handOver },
      );
      return appended;
    });
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.followUps.set(sessionId, settled);
    void settled.then(() => {
      if (this.followUps.get(sessionId) === settled) this.followUps.delete(sessionId);
    });
    return next;
  }

  /** Stops a session's run, if any, and waits for it to wind down; a queued one leaves the queue. */
  async stop(sessionId: string, reason: StopReason): Promise<void> {
    const at = this.queue.findIndex((q) => q.sessionId === sessionId);
    if (at >= 0) {
      this.queue.splice(at, 1);
      await this.deps.service.finish(
        sessionId,
        resultMessage(reason.success, reason.text, 0, 0),
        reason.status ?? null,
      );
      return;
    }
    const run = this.running.get(sessionId);
    if (!run) return;
    run.stopReason = reason;
    run.controller.abort();
    await run.done;
  }

  /** Stops every run, recording why, before the store closes; queued runs stay queued. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await Promise.all(
      [...this.running.keys()].map((id) =>
        this.stop(id, {
          text: 'Session Desk was stopped while the agent was running.',
          success: false,
          status: 'failed',
        }),
      ),
    );
  }

  /**
   * After a restart: the process groups of runs a crash cut off, still running, are ended
   * (only those verified to be theirs); then sessions whose agent was cut off are marked
   * failed, with a result message saying so (after error results for the tool calls the run
   * left open), and queued runs are queued again, in order.
   * Returns how many sessions were marked.
   */
  async recoverInterrupted(): Promise<number> {
    const { repos, service } = this.deps;
    const ended = await endOrphans(repos.runs.processes(), this.deps.logger, (id) =>
      sandboxPath(this.sandboxRoot, id),
    );
    await service.forgetProcesses(repos.runs.processes().map((p) => p.sessionId));
    const ids = repos.sessions.runningIds();
    for (const id of ids) {
      const run = await lastRun({ store: this.deps.store, repos }, id);
      for (const closing of unfinishedToolResults(run)) await service.appendMessage(id, closing, null);
      const text = ended.has(id)
        ? 'Session Desk stopped unexpectedly while the agent was running; the agent, still running, was ended. Send a follow-up to resume.'
        : 'Session Desk stopped while the agent was running; send a follow-up to resume.';
      const result = resultMessage(false, text, 0, 0);
      const usage = await this.recordCrashedUsage(id, run);
      if (usage) result.usage = usage;
      await service.finish(id, result, 'failed');
      // A continuation of an imported session: what its CLI wrote to the session's file is in
      // the transcript as the run printed it, so the file is read past it, not imported again.
      if (repos.sessions.find(id)?.source) await this.releaseFile(id);
    }
    for (const queued of repos.runs.queued()) {
      if (repos.sessions.agentState(queued.sessionId) !== 'queued') continue;
      if (queued.mode === 'follow-up' && repos.sessions.find(queued.sessionId)?.source) {
        // Where to continue an imported session was chosen for that follow-up and not kept.
        await service.finish(
          queued.sessionId,
          resultMessage(
            false,
            'Session Desk restarted while this follow-up waited for a place; send it again, choosing where to continue.',
            0,
            0,
          ),
          'failed',
        );
        continue;
      }
      this.queue.push({
        sessionId: queued.sessionId,
        mode: queued.mode,
        prompts: queued.prompt === undefined ? [] : [queued.prompt],
      });
    }
    this.pump();
    return ids.length;
  }

  /**
   * What a run a crash cut off used, as its CLI logged it in its own session file (what it
   * printed went with the server): recorded as the run's, and returned for its result.
   */
  private async recordCrashedUsage(id: string, run: LastRun): Promise<Usage | undefined> {
    const { repos, service } = this.deps;
    const conversation = repos.sessions.conversation(id);
    if (!conversation || !isCliKind(conversation.kind) || run.prompt === undefined) return undefined;
    const { loggedUsage } = CLI_KIND_SPECS[conversation.kind];
    if (!loggedUsage) return undefined;
    const logged = await loggedUsage({
      env: this.agentEnvironment(),
      conversationId: conversation.id,
      usageBefore: repos.sessions.conversationUsage(id, conversation.id),
      prompt: run.prompt,
    }).catch(() => null);
    if (!logged || (logged.inputTokens === 0 && logged.outputTokens === 0)) return undefined;
    const usage = roundedUsage(logged);
    await service.recordRun(id, { kind: conversation.kind, conversationId: conversation.id, usage });
    return usage;
  }

  /** Runs `work` with the imported session's file held, so what its CLI writes is not imported twice. */
  private async holdingFile<T>(sessionId: string, workdir: string, work: () => Promise<T>): Promise<T> {
    const history = this.deps.history;
    if (!history) return work();
    await history.hold(sessionId, workdir);
    try {
      return await work();
    } finally {
      await this.releaseFile(sessionId);
    }
  }

  /** Reads an imported session's file past what a run of ours wrote to it, and follows it again. */
  private async releaseFile(sessionId: string): Promise<void> {
    await this.deps.history
      ?.release(sessionId)
      .catch((err: unknown) =>
        this.deps.logger.warn(`Could not read past what the run of ${sessionId} wrote: ${String(err)}`),
      );
  }

  /** Runs that count against the limit: those of agents that run programs (not the demo). */
  private limitedRunning(): number {
    let count = 0;
    for (const run of this.running.values()) if (run.limited) count += 1;
    return count;
  }

  /** Whether the workspace's agent runs a program (and so counts against the limit). */
  private runsProgram(workspaceId: string): boolean {
    try {
      return this.workspaces.runnerFor(workspaceId).kind !== 'demo';
    } catch {
      return false; // It fails at once, saying why: nothing to wait for.
    }
  }

  /** Starts a run, or queues it when the limit is reached (or others wait already). */
  private async launch(wanted: WaitingRun, options: { handOver?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    const row = this.deps.repos.sessions.find(wanted.sessionId);
    if (!row) return;
    const limited = wanted.continueIn !== undefined || this.runsProgram(row.workspaceId);
    const full = this.queue.length > 0 || this.limitedRunning() >= this.maxRuns;
    // A follow-up takes over the place of the run it interrupted.
    if (limited && full && !options.handOver) {
      this.queue.push(wanted);
      await this.deps.service
        .queueRun(queuedRunOf(wanted))
        .catch((err: unknown) =>
          this.deps.logger.error(`Could not record that ${wanted.sessionId} is queued: ${String(err)}`),
        );
      return;
    }
    this.run(wanted, limited);
  }

  /** Starts queued runs while there are places for them. */
  private pump(): void {
    while (!this.closed && this.queue.length > 0 && this.limitedRunning() < this.maxRuns) {
      this.run(this.queue.shift() as WaitingRun, true);
    }
  }

  private run(wanted: WaitingRun, limited: boolean): void {
    const { sessionId } = wanted;
    const row = this.deps.repos.sessions.find(sessionId);
    const input = this.deps.repos.sessions.agentInput(sessionId);
    if (!row || !input) return;
    // An imported session goes on where the follow-up chose: checked again, the folder may be gone.
    let plan: Continuation | AgentSetupError | undefined;
    if (wanted.continueIn !== undefined) {
      try {
        plan = this.planContinuation(row, wanted.continueIn);
      } catch (err) {
        plan = new AgentSetupError((err as Error).message);
      }
    }
    const continuation = plan instanceof AgentSetupError ? undefined : plan;
    const repoUrl = continuation ? continuation.repoUrl : input.repoUrl;
    const author = this.deps.repos.users.findById(row.authorId);
    const session: AgentSession = {
      id: row.id,
      workspaceId: row.workspaceId,
      title: row.title,
      model: row.model,
      baseBranch: input.baseBranch,
      ...(repoUrl ? { repoUrl } : {}),
      ...(row.repository ? { repository: row.repository } : {}),
      ...(author ? { author: { name: author.name, email: author.email } } : {}),
    };
    const controller = new AbortController();
    const { service } = this.deps;
    let recordingProcess: Promise<void> = Promise.resolve();
    const refusals = refusalNotices((message) =>
      service
        .appendMessage(sessionId, message, null)
        .then(() => undefined)
        .catch((err: unknown) =>
          this.deps.logger.warn(`Could not record a refused connection of ${sessionId}: ${String(err)}`),
        ),
    );
    // A continuation in the person's own folder works there; every other run in its sandbox.
    const sandboxDir = continuation?.cwd ?? sandboxPath(this.sandboxRoot, sessionId);
    const ctx: RunContext = {
      session,
      sandboxDir,
      ...(continuation?.cwd ? {} : { ownedFolder: sandboxDir }),
      signal: controller.signal,
      confinement: {
        sandbox: this.osSandbox,
        rules: {
          writable: [sandboxDir],
          readable: [],
          state: [],
          hidden: [this.deps.dataDir, this.sandboxRoot],
        },
      },
      sink: {
        assistant: async (message) => {
          await service.appendMessage(sessionId, message, null);
          await recordReportedPullRequest(this.deps, session, message);
        },
        tasks: (tasks) => service.replaceTasks(sessionId, tasks),
        branch: (name) => service.setBranch(sessionId, name),
      },
      processStarted: (pgid) => {
        recordingProcess = service
          .recordProcess(sessionId, pgid)
          .catch((err: unknown) =>
            this.deps.logger.warn(`Could not record the process of ${sessionId}: ${String(err)}`),
          );
      },
    };
    const { firstMessage } = input;
    const work = (runner: AgentRunner): Promise<RunOutcome> =>
      wanted.mode === 'start'
        ? runner.start(
            ctx,
            wanted.prompts.length === 0
              ? firstMessage
              : joinPrompts(firstMessage === undefined ? wanted.prompts : [firstMessage, ...wanted.prompts]),
          )
        : runner.followUp(ctx, joinPrompts(wanted.prompts));
    const entry: Running = { controller, done: Promise.resolve(), limited };
    entry.done = (async () => {
      const started = Date.now();
      let proxy: ProxyLease | undefined;
      try {
        if (plan instanceof AgentSetupError) throw plan;
        // A branch only in the person's own clone is not in the repository: the clone starts from its default.
        if (continuation?.repoUrl) {
          session.baseBranch = await branchToClone(
            continuation.repoUrl,
            session.baseBranch,
            this.agentEnvironment(),
          );
        }
        const runner = continuation
          ? createContinuationRunner(continuation, {
              service,
              repos: this.deps.repos,
              env: this.agentEnvironment(),
              lookupEnv: this.deps.config.env ?? process.env,
              timeoutMs:
                this.deps.repos.workspaces.settings(session.workspaceId)?.timeoutMs ??
                DEFAULT_AGENT_TIMEOUT_MS,
            })
          : this.workspaces.runnerFor(session.workspaceId);
        if (runner.kind !== 'demo' && ctx.confinement)
          proxy = await this.limitNetwork(session.workspaceId, ctx.confinement.rules, refusals.refused);
        // The demo agent runs no program: there is nothing to hold.
        await service.runStarts(
          sessionId,
          runner.kind,
          runner.kind === 'demo' ? null : this.osSandbox.isolation,
        );
        // Folders may have changed hands since the start: each run checks its own again.
        if (runner.kind !== 'demo' && !continuation?.cwd) {
          secureSessionFolder(this.sandboxRoot, this.deps.dataDir, sessionId, this.deps.logger);
        }
        const { result } = continuation
          ? await this.holdingFile(sessionId, ctx.sandboxDir, () => work(runner))
          : await work(runner);
        await recordingProcess;
        await refusals.end();
        if (controller.signal.aborted) throw new RunAborted();
        await recordBranchAtEnd(this.deps, session, ctx.sandboxDir, this.agentEnvironment());
        await service.finish(sessionId, result, result.is_error ? 'failed' : 'completed', { outcome: true });
      } catch (err) {
        await recordingProcess;
        await refusals.end();
        const stopped = controller.signal.aborted;
        const reason = entry.stopReason;
        const text = stopped
          ? (reason?.text ?? 'Stopped.')
          : err instanceof SandboxError ||
              err instanceof SandboxRootError ||
              err instanceof AgentSetupError ||
              err instanceof NamedCommandsError
            ? err.message
            : `The agent failed: ${err instanceof Error ? err.message : String(err)}`;
        // A stop by PATCH has already set the status; a failure sets it to failed.
        const status: SessionStatus | null = stopped ? (reason?.status ?? null) : 'failed';
        await recordBranchAtEnd(this.deps, session, ctx.sandboxDir, this.agentEnvironment());
        const result = resultMessage(
          stopped ? (reason?.success ?? false) : false,
          text,
          Date.now() - started,
          0,
        );
        if (err instanceof RunAborted && err.usage) result.usage = err.usage;
        await service
          .finish(sessionId, result, status, {
            keepRunning: stopped && reason?.handOver === true,
            outcome: !stopped,
          })
          .catch((writeErr: unknown) =>
            this.deps.logger.error(`Could not record the end of ${sessionId}: ${String(writeErr)}`),
          );
      } finally {
        await proxy?.close();
        if (this.running.get(sessionId) === entry) this.running.delete(sessionId);
        // A run handing its place over to a follow-up leaves it to that follow-up.
        if (entry.stopReason?.handOver !== true) this.pump();
      }
    })();
    this.running.set(sessionId, entry);
  }
}

/** A run waiting for a place (or about to start): the prompts it will pass, in order. */
interface WaitingRun {
  sessionId: string;
  mode: QueuedRun['mode'];
  prompts: string[];
  /** A follow-up to an imported session: where its conversation goes on. */
  continueIn?: ContinueIn;
}

/** Prompts sent while a run waited reach the agent as one, in order, a blank line apart. */
function joinPrompts(prompts: string[]): string {
  return prompts.join('\n\n');
}

/** What is kept of a waiting run across restarts (a start's first message is the session's). */
function queuedRunOf(run: WaitingRun): QueuedRun {
  return {
    sessionId: run.sessionId,
    mode: run.mode,
    ...(run.prompts.length > 0 ? { prompt: joinPrompts(run.prompts) } : {}),
  };
}
