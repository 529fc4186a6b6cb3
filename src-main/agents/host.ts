import type { AgentSettings } from '../../src-shared/accounts.js';
import type { SessionStatus } from '../../src-shared/sessions.js';
import type { Logger } from '../clock.js';
import type { SessionService } from '../sessions/service.js';
import type { Repositories } from '../store/repositories.js';
import { createCliAgent } from './cli-agent.js';
import { CLI_KIND_SPECS, isCliKind } from './cli-kinds.js';
import { createCliRunStore } from './cli-run-store.js';
import { createCommandAgent, DEFAULT_AGENT_TIMEOUT_MS } from './command-agent.js';
import { createDemoAgent } from './demo-agent.js';
import { agentEnvironment } from './environment.js';
import { NamedCommandsError, readNamedCommands } from './named-commands.js';
import { recordBranchAtEnd, recordReportedPullRequest } from './repository-facts.js';
import { sandboxPath, SandboxError } from './sandbox.js';
import { checkSandboxRoot, defaultSandboxRoot, moveLegacySandboxes } from './sandbox-root.js';
import {
  resultMessage,
  RunAborted,
  type AgentRunner,
  type AgentSession,
  type RunContext,
  type RunOutcome,
} from './types.js';

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
}

/** The workspace's agent cannot run as set (the session fails with this message). */
export class AgentSetupError extends Error {}

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
  private closed = false;

  constructor(
    private readonly deps: {
      service: SessionService;
      repos: Repositories;
      dataDir: string;
      config: AgentConfig;
      logger: Logger;
    },
  ) {}

  /** The folder holding every session's sandbox: outside the data directory, checked. */
  get sandboxRoot(): string {
    return checkSandboxRoot(
      this.deps.config.sandboxRoot ?? defaultSandboxRoot(this.deps.dataDir),
      this.deps.dataDir,
    );
  }

  /** Moves sandboxes an earlier version kept inside the data directory out of it. */
  moveLegacySandboxes(): void {
    moveLegacySandboxes(this.deps.dataDir, this.sandboxRoot, this.deps.logger);
  }

  /** The allow-listed environment agents run with (and git in their sandboxes). */
  agentEnvironment(): NodeJS.ProcessEnv {
    return agentEnvironment(this.deps.config.env ?? process.env, this.deps.config.agentEnvNames ?? []);
  }

  /** The commands the administrator defined, by name (read afresh: the CLI may change them). */
  namedCommands(): Record<string, string[]> {
    return readNamedCommands(this.deps.dataDir);
  }

  /**
   * The agent a workspace uses: its own setting, else the environment's command, else the
   * demo; with the commands the administrator defined, to choose from.
   */
  settingsFor(workspaceId: string): {
    settings: AgentSettings;
    source: 'workspace' | 'environment' | 'default';
    commands: { name: string; command: string[] }[];
  } {
    const commands = Object.entries(this.namedCommands()).map(([name, command]) => ({ name, command }));
    const own = this.deps.repos.workspaces.settings(workspaceId);
    if (own) return { settings: own, source: 'workspace', commands };
    if (this.deps.config.defaultCommand) {
      return {
        settings: { agent: 'command', command: this.deps.config.defaultCommand },
        source: 'environment',
        commands,
      };
    }
    return { settings: { agent: 'demo' }, source: 'default', commands };
  }

  /** Throws AgentSetupError, saying why, when the workspace's agent cannot run. */
  private runnerFor(workspaceId: string): AgentRunner {
    const own = this.deps.repos.workspaces.settings(workspaceId);
    const timeoutMs = own?.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS;
    if (own && isCliKind(own.agent)) {
      return createCliAgent({
        spec: CLI_KIND_SPECS[own.agent],
        env: this.agentEnvironment(),
        lookupEnv: this.deps.config.env ?? process.env,
        timeoutMs,
        runs: createCliRunStore(own.agent, this.deps.service, this.deps.repos),
      });
    }
    if (own?.agent === 'command') {
      if (own.commandName === undefined) {
        throw new AgentSetupError(
          "This workspace's agent is a program the workspace chose itself. Only the administrator " +
            'defines agent commands (sessiondesk agent-command set NAME -- program args…); choose one ' +
            'of theirs in Settings, then Agent.',
        );
      }
      const command = this.namedCommands()[own.commandName];
      if (!command) {
        throw new AgentSetupError(
          `The agent command "${own.commandName}" is no longer defined; ask the administrator, or choose another in Settings, then Agent.`,
        );
      }
      return createCommandAgent({ command, timeoutMs, environment: this.agentEnvironment() });
    }
    if (!own && this.deps.config.defaultCommand) {
      return createCommandAgent({
        command: this.deps.config.defaultCommand,
        timeoutMs,
        environment: this.agentEnvironment(),
      });
    }
    return createDemoAgent({
      paceMs: this.deps.config.demoPaceMs,
      ...(this.deps.config.demoSeed === undefined ? {} : { seed: this.deps.config.demoSeed }),
    });
  }

  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /** Starts the agent on a new session's first prompt. */
  start(sessionId: string): void {
    this.launch(sessionId, (runner, ctx, input) => runner.start(ctx, input.firstMessage));
  }

  /**
   * Passes a follow-up to the session's agent. A run still going is stopped first (the
   * prompt supersedes it); a finished session is resumed.
   */
  async followUp(sessionId: string, text: string): Promise<void> {
    await this.stop(sessionId, { text: 'Interrupted by a follow-up prompt.', success: true, handOver: true });
    this.launch(sessionId, (runner, ctx) => runner.followUp(ctx, text));
  }

  /** Stops a session's run, if any, and waits for it to wind down. */
  async stop(sessionId: string, reason: StopReason): Promise<void> {
    const run = this.running.get(sessionId);
    if (!run) return;
    run.stopReason = reason;
    run.controller.abort();
    await run.done;
  }

  /** Stops every run, recording why, before the store closes. */
  async close(): Promise<void> {
    this.closed = true;
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
   * After a restart: sessions whose agent was cut off by the stop are marked failed, with a
   * result message saying so. None is left active forever.
   */
  async recoverInterrupted(): Promise<number> {
    const ids = this.deps.repos.sessions.runningIds();
    for (const id of ids) {
      await this.deps.service.finish(
        id,
        resultMessage(
          false,
          'Session Desk stopped while the agent was running; send a follow-up to resume.',
          0,
          0,
        ),
        'failed',
      );
    }
    return ids.length;
  }

  private launch(
    sessionId: string,
    work: (runner: AgentRunner, ctx: RunContext, input: { firstMessage?: string }) => Promise<RunOutcome>,
  ): void {
    if (this.closed) return;
    const row = this.deps.repos.sessions.find(sessionId);
    const input = this.deps.repos.sessions.agentInput(sessionId);
    if (!row || !input) return;
    const session: AgentSession = {
      id: row.id,
      workspaceId: row.workspaceId,
      title: row.title,
      model: row.model,
      baseBranch: input.baseBranch,
      ...(input.repoUrl ? { repoUrl: input.repoUrl } : {}),
      ...(row.repository ? { repository: row.repository } : {}),
    };
    const controller = new AbortController();
    const { service } = this.deps;
    const ctx: RunContext = {
      session,
      sandboxDir: sandboxPath(this.sandboxRoot, sessionId),
      signal: controller.signal,
      sink: {
        assistant: async (message) => {
          await service.appendMessage(sessionId, message, null);
          await recordReportedPullRequest(this.deps, session, message);
        },
        tasks: (tasks) => service.replaceTasks(sessionId, tasks),
        branch: (name) => service.setBranch(sessionId, name),
      },
    };
    const entry: Running = { controller, done: Promise.resolve() };
    entry.done = (async () => {
      const started = Date.now();
      try {
        const runner = this.runnerFor(session.workspaceId);
        await service.setAgentRunning(sessionId, true, runner.kind);
        const { result } = await work(
          runner,
          ctx,
          input.firstMessage === undefined ? {} : { firstMessage: input.firstMessage },
        );
        if (controller.signal.aborted) throw new RunAborted();
        await recordBranchAtEnd(this.deps, session, ctx.sandboxDir, this.agentEnvironment());
        await service.finish(sessionId, result, result.is_error ? 'failed' : 'completed');
      } catch (err) {
        const stopped = controller.signal.aborted;
        const reason = entry.stopReason;
        const text = stopped
          ? (reason?.text ?? 'Stopped.')
          : err instanceof SandboxError || err instanceof AgentSetupError || err instanceof NamedCommandsError
            ? err.message
            : `The agent failed: ${err instanceof Error ? err.message : String(err)}`;
        if (!stopped) this.deps.logger.warn(`Agent run for ${sessionId} failed: ${text}`);
        // A stop by PATCH has already set the status; a failure sets it to failed.
        const status: SessionStatus | null = stopped ? (reason?.status ?? null) : 'failed';
        await recordBranchAtEnd(this.deps, session, ctx.sandboxDir, this.agentEnvironment());
        await service
          .finish(
            sessionId,
            resultMessage(stopped ? (reason?.success ?? false) : false, text, Date.now() - started, 0),
            status,
            { keepRunning: stopped && reason?.handOver === true },
          )
          .catch((writeErr: unknown) =>
            this.deps.logger.error(`Could not record the end of ${sessionId}: ${String(writeErr)}`),
          );
      } finally {
        if (this.running.get(sessionId) === entry) this.running.delete(sessionId);
      }
    })();
    this.running.set(sessionId, entry);
  }
}
