import type { AgentKindInfo } from '../../../src-shared/accounts.js';
import type { AgentCheck } from '../../../src-shared/agent-check.js';
import type { ContinueIn } from '../../../src-shared/sessions.js';
import type { Approvals } from '../../approvals/service.js';
import type { Logger } from '../../clock.js';
import type { RunHolds } from '../../history/run-holds.js';
import type { SessionService } from '../../sessions/service.js';
import type { Storage } from '../../store/storage.js';
import type { SessionRow } from '../../store/session-row.js';
import type { QueuedRun } from '../../store/runs.js';
import type { TranscriptReads } from '../../sessions/transcript-reads.js';
import { joinPrompts, runAgent, type RunDeps, type StopReason, type WaitingRun } from './agent-run.js';
import { recoverInterrupted } from './crashed-runs.js';
import { SOLE_PROCESS, type RunLeases } from './leases.js';
import { answerRunRequests, atRun, type RunRequest, type RunRequests } from './run-requests.js';
import { conflict } from '../../errors.js';
import { cliHomePath } from '../kinds/cli/cli-homes.js';
import type { CliKind } from '../kinds/cli-kind-names.js';
import { agentEnvironment } from '../sandbox/environment.js';
import type { Located } from '../executables.js';
import type { AcpAgentSpec } from '../kinds/acp/acp-agents.js';
import { describeAgentKinds, locateAgentProgram, locateProgram } from '../kinds/cli/programs.js';
import {
  continuationChoices,
  planContinuation,
  type Continuation,
  type ContinuationHost,
} from './imported-continuation.js';
import type { AgentConfig } from './config.js';
import { sessionRunStores, WorkspaceAgents } from './workspace-agents.js';
import { checkAgent } from './agent-check.js';
import { NetworkProxies } from '../sandbox/network-proxy.js';
import { detectOsSandbox } from '../sandbox/os-sandbox.js';
import type { OsSandbox } from '../types.js';
import { sandboxPath } from '../sandbox/session-folder.js';
import {
  checkSandboxRoot,
  defaultSandboxRoot,
  moveLegacySandboxes,
  secureSandboxRoot,
} from '../sandbox/sandbox-root.js';
import { resultMessage } from '../types.js';

const DEFAULT_MAX_RUNS = 3;

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
 * stopped from here (what happens inside one is agent-run.ts). Everything a run produces goes
 * through the session service, so it is durable and visible through the API as it happens.
 */
export class AgentHost {
  private readonly running = new Map<string, Running>();
  /** Runs waiting for a place, first in line first (kept durably too, in run_queue). */
  private readonly queue: WaitingRun[] = [];
  /** The follow-up of each session being handled, so that the next waits for it. */
  private readonly followUps = new Map<string, Promise<void>>();
  private closed = false;
  /** Looks for runs of server processes that died (team database only). */
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping = false;
  /** The recovery going on: one at a time, the first at start and every sweep after it. */
  private recovering: Promise<number> = Promise.resolve(0);
  private osSandboxFound: OsSandbox | undefined;
  /** The agent checks going on, by workspace. */
  private readonly checks = new Map<string, Promise<AgentCheck>>();
  private readonly proxies = new NetworkProxies(() => [this.deps.dataDir, this.sandboxRoot]);
  private readonly workspaces: WorkspaceAgents;
  private readonly runDeps: RunDeps;

  constructor(
    private readonly deps: {
      service: SessionService;
      /** What agents ask before they act, in workspaces that ask. */
      approvals: Approvals;
      storage: Storage;
      /** Where a crashed run's transcript is read from. */
      transcripts: TranscriptReads;
      dataDir: string;
      config: AgentConfig;
      logger: Logger;
      /** Holds the file of an imported session while a run of ours resumes its conversation. */
      history?: Pick<RunHolds, 'hold' | 'release'>;
      /** Which process's runs are whose, on a team database; omitted, this process holds them all. */
      leases?: RunLeases;
      /** The way to the process running a session, on a team database (run-requests.ts). */
      requests?: RunRequests;
    },
  ) {
    this.workspaces = new WorkspaceAgents({
      stores: sessionRunStores(deps.service, deps.storage.repos),
      workspaces: deps.storage.repos.workspaces,
      dataDir: deps.dataDir,
      config: deps.config,
      osSandbox: () => this.osSandbox,
      agentEnvironment: () => this.agentEnvironment(),
    });
    this.runDeps = {
      service: deps.service,
      approvals: deps.approvals,
      repos: deps.storage.repos,
      logger: deps.logger,
      dataDir: deps.dataDir,
      sandboxRoot: () => this.sandboxRoot,
      osSandbox: () => this.osSandbox,
      agentEnvironment: () => this.agentEnvironment(),
      lookupEnv: deps.config.env ?? process.env,
      proxies: this.proxies,
      runnerFor: (workspaceId) => this.workspaces.runnerFor(workspaceId),
      planContinuation: (session, where) => this.planContinuation(session, where),
      holdingFile: (sessionId, work) => this.holdingFile(sessionId, work),
    };
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
  defaultModel(workspaceId: string): Promise<string> {
    return this.workspaces.defaultModel(workspaceId);
  }

  /**
   * How a follow-up to a session imported from a CLI's files would go on (`where`), or an
   * AppError (409) saying why it cannot; checked before the prompt is written, and again
   * when the run starts.
   */
  planContinuation(session: SessionRow, where: ContinueIn | undefined): Continuation {
    return planContinuation(session, where, this.continuationHost());
  }

  /** Which ways an imported session can go on here, and why not (imported-continuation.ts). */
  continuationChoices(session: SessionRow): ReturnType<typeof continuationChoices> {
    return continuationChoices(session, this.continuationHost());
  }

  private continuationHost(): ContinuationHost {
    return {
      env: this.agentEnvironment(),
      dataDir: this.deps.dataDir,
      sandboxRoot: this.sandboxRoot,
      // As a run finds its program (cli-agent.ts).
      locate: (kind) => this.locateProgram(kind, this.deps.config.env ?? process.env),
    };
  }

  /** Session Desk's own folders: no program it runs may lie in them, and no sandbox shows them. */
  private get ownFolders(): string[] {
    return [this.deps.dataDir, this.sandboxRoot];
  }

  /** Where a CLI kind's program is, refused when it lies in Session Desk's own folders. */
  locateProgram(kind: CliKind, env: NodeJS.ProcessEnv): Located {
    return locateProgram(kind, env, this.ownFolders);
  }

  /** Where an ACP agent's program is, refused when it lies in Session Desk's own folders. */
  locateAcpAgent(spec: AcpAgentSpec, env: NodeJS.ProcessEnv): Located {
    return locateAgentProgram(spec, env, this.ownFolders);
  }

  /** Every ACP agent this installation can run, the administrator's included. */
  acpAgents(): AcpAgentSpec[] {
    return this.workspaces.acpAgents();
  }

  /** Every agent kind, for Settings: each CLI's version asked in the agents' sandbox. */
  describeAgents(env: NodeJS.ProcessEnv): Promise<AgentKindInfo[]> {
    return describeAgentKinds(env, this.acpAgents(), {
      sandbox: this.osSandbox,
      hidden: this.ownFolders,
      agentFolders: this.ownFolders,
    });
  }

  /**
   * The workspace's agent checked as a session would run it (agent-check.ts). A check asked
   * while one of the same workspace runs gets that one's answer: one agent started, not many.
   */
  checkAgent(workspaceId: string): Promise<AgentCheck> {
    const going = this.checks.get(workspaceId);
    if (going) return going;
    const check = checkAgent(
      {
        workspaces: this.deps.storage.repos.workspaces,
        dataDir: this.deps.dataDir,
        sandboxRoot: this.sandboxRoot,
        config: this.deps.config,
        logger: this.deps.logger,
        osSandbox: () => this.osSandbox,
        agentEnvironment: () => this.agentEnvironment(),
        lookupEnv: this.deps.config.env ?? process.env,
        proxies: this.proxies,
      },
      workspaceId,
    ).finally(() => this.checks.delete(workspaceId));
    this.checks.set(workspaceId, check);
    return check;
  }

  /** Whether a run of the session is going or waiting for a place. */
  isActive(sessionId: string): boolean {
    return this.running.has(sessionId) || this.queue.some((q) => q.sessionId === sessionId);
  }

  private get leases(): RunLeases {
    return this.deps.leases ?? SOLE_PROCESS;
  }

  /**
   * Takes the session's run for this process; 409 when another server process holds it (a
   * start or follow-up reaches here through `atRun`, so only a run taken meanwhile).
   */
  private async lease(sessionId: string): Promise<void> {
    if (this.isActive(sessionId) || (await this.leases.take(sessionId)) !== 'refused') return;
    throw conflict(
      "This session's agent is running on another server process of this team database; try again once it is done.",
    );
  }

  /**
   * Does `here` in the process running the session's agent: this one when it runs it or none
   * does; else that process is asked, through the team database, and its answer is this one's.
   */
  atRun<T>(request: RunRequest, here: () => Promise<T>): Promise<T> {
    return atRun(
      {
        isActive: (id) => this.isActive(id),
        leases: this.leases,
        letGo: (id) => this.letGo(id),
        requests: this.deps.requests,
        agentState: (id) => this.deps.storage.repos.sessions.agentState(id),
      },
      request,
      here,
    );
  }

  /** How the requests other server processes send about the runs of this one are done. */
  answerRequests(perform: (request: RunRequest) => Promise<unknown>): void {
    if (this.deps.requests) answerRunRequests(this.deps.requests, perform, this.deps.logger);
  }

  /** Lets the session's lease go once nothing of it runs or waits here. */
  private letGo(sessionId: string): void {
    if (this.isActive(sessionId)) return;
    this.leases
      .release(sessionId)
      .catch((err: unknown) =>
        this.deps.logger.warn(`Could not let go of the run of ${sessionId}: ${String(err)}`),
      );
  }

  /** Starts the agent on a new session's first prompt, or queues it (resolves once recorded). */
  async start(sessionId: string): Promise<void> {
    await this.lease(sessionId);
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
    options: Pick<WaitingRun, 'continueIn' | 'statusBefore'> = {},
  ): Promise<T> {
    // One follow-up of a session at a time, in the order they came.
    const previous = this.followUps.get(sessionId) ?? Promise.resolve();
    const next = previous.then(async () => {
      await this.lease(sessionId);
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
          ...options,
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
    if (this.sweeper) clearInterval(this.sweeper);
    this.queue.length = 0;
    await Promise.all(
      [...this.running.keys()].map((id) =>
        this.stop(id, {
          text: 'Session Desk was stopped while the agent was running.',
          success: false,
          status: 'failed',
          shutdown: true,
        }),
      ),
    );
  }

  /**
   * After a restart: what the runs the last stop cut off left is dealt with (crashed-runs.ts),
   * and the runs that waited for a place are queued again, in order, and start as places allow.
   * Returns how many sessions were marked failed.
   */
  recoverInterrupted(): Promise<number> {
    const next = this.recovering.catch(() => 0).then(() => this.recoverOnce());
    this.recovering = next;
    return next;
  }

  private async recoverOnce(): Promise<number> {
    const every = this.leases.sweepEveryMs;
    if (every !== null && !this.sweeper && !this.closed) {
      this.sweeper = setInterval(() => void this.sweep(), every);
      this.sweeper.unref();
    }
    const { marked, failed, queued } = await recoverInterrupted({
      leases: this.leases,
      isActive: (id) => this.isActive(id),
      service: this.deps.service,
      repos: this.deps.storage.repos,
      transcripts: this.deps.transcripts,
      logger: this.deps.logger,
      sandboxOf: (id) => sandboxPath(this.sandboxRoot, id),
      cliHomeOf: (id) => cliHomePath(this.sandboxRoot, id),
      agentEnvironment: () => this.agentEnvironment(),
      releaseFile: (id) => this.releaseFile(id),
    });
    // On a team database, what those runs asked waits for no one now (after a restart on the
    // desktop, the server expires every pending request itself).
    if (every !== null && failed.length > 0) await this.deps.approvals.expireAbandoned(failed);
    for (const run of queued) {
      this.queue.push({
        sessionId: run.sessionId,
        mode: run.mode,
        prompts: run.prompt === undefined ? [] : [run.prompt],
      });
    }
    this.pump();
    return marked;
  }

  /** The runs of a server process that died, found by another: recovered as after a restart. */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    try {
      const marked = await this.recoverInterrupted();
      if (marked > 0) {
        this.deps.logger.warn(
          `Marked ${marked} session(s) failed whose server process stopped while they ran.`,
        );
      }
    } catch (err) {
      this.deps.logger.warn(`Could not look for runs of stopped server processes: ${String(err)}`);
    } finally {
      this.sweeping = false;
    }
  }

  /** Runs `work` with the imported session's file held: it is read again once the run ends. */
  private async holdingFile<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const history = this.deps.history;
    if (!history) return work();
    await history.hold(sessionId);
    try {
      return await work();
    } finally {
      await this.releaseFile(sessionId);
    }
  }

  /** Reads an imported session's file again (what the person added meanwhile), and follows it again. */
  private async releaseFile(sessionId: string): Promise<void> {
    await this.deps.history
      ?.release(sessionId)
      .catch((err: unknown) =>
        this.deps.logger.warn(`Could not read the file of ${sessionId} again after its run: ${String(err)}`),
      );
  }

  /** Runs that count against the limit: those of agents that run programs (not the demo). */
  private limitedRunning(): number {
    let count = 0;
    for (const run of this.running.values()) if (run.limited) count += 1;
    return count;
  }

  /** Whether the workspace's agent runs a program (and so counts against the limit). */
  private async runsProgram(workspaceId: string): Promise<boolean> {
    try {
      return (await this.workspaces.runnerFor(workspaceId)).kind !== 'demo';
    } catch {
      return false; // It fails at once, saying why: nothing to wait for.
    }
  }

  /** Starts a run, or queues it when the limit is reached (or others wait already). */
  private async launch(wanted: WaitingRun, options: { handOver?: boolean } = {}): Promise<void> {
    if (this.closed) return this.letGo(wanted.sessionId);
    const row = await this.deps.storage.repos.sessions.find(wanted.sessionId);
    if (!row) return this.letGo(wanted.sessionId);
    const limited = wanted.continueIn !== undefined || (await this.runsProgram(row.workspaceId));
    // From here on in one step: whether there is a place, and taking it.
    if (this.closed) return;
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

  /** Starts the run now (agent-run.ts); it holds its place until its end is recorded. */
  private run(wanted: WaitingRun, limited: boolean): void {
    const { sessionId } = wanted;
    const entry: Running = { controller: new AbortController(), done: Promise.resolve(), limited };
    const done = runAgent(this.runDeps, wanted, entry.controller.signal, () => entry.stopReason);
    entry.done = done.finally(() => {
      if (this.running.get(sessionId) === entry) this.running.delete(sessionId);
      // A follow-up that took this run's place goes on with its lease.
      if (entry.stopReason?.handOver !== true) this.letGo(sessionId);
      // A run handing its place over to a follow-up leaves it to that follow-up.
      if (entry.stopReason?.handOver !== true) this.pump();
    });
    this.running.set(sessionId, entry);
  }
}

/** What is kept of a waiting run across restarts (a start's first message is the session's). */
function queuedRunOf(run: WaitingRun): QueuedRun {
  return {
    sessionId: run.sessionId,
    mode: run.mode,
    ...(run.prompts.length > 0 ? { prompt: joinPrompts(run.prompts) } : {}),
    ...(run.statusBefore ? { statusBefore: run.statusBefore } : {}),
  };
}
