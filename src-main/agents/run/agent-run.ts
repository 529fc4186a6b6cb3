/**
 * One run of a session's agent, from what it is given to how its end is recorded: the
 * session and its folder, the confinement and network it runs in, the runner, and the result
 * (the agent's, or why it stopped or failed). Apart from the agent host, which decides when
 * runs start, wait and stop; this is what happens inside one.
 */
import type { ContinueIn, SessionStatus } from '../../../src-shared/sessions.js';
import type { Approvals, EndReason, RunApprovals } from '../../approvals/service.js';
import type { SessionRow } from '../../store/session-row.js';
import type { QueuedRun } from '../../store/runs.js';
import { cliHomePath } from '../kinds/cli/cli-homes.js';
import { notice } from '../output-caps.js';
import { DEFAULT_AGENT_TIMEOUT_MS } from '../kinds/command/command-agent.js';
import { branchToClone, createContinuationRunner, type Continuation } from './imported-continuation.js';
import { NamedCommandsError } from '../kinds/command/named-commands.js';
import { refusalNotices, type ProxyLease } from '../sandbox/network-proxy.js';
import { recordBranchAtEnd, recordReportedPullRequest, type FactsDeps } from './repository-facts.js';
import { sandboxPath, SandboxError } from '../sandbox/session-folder.js';
import { SandboxRootError, secureSessionFolder } from '../sandbox/sandbox-root.js';
import {
  resultMessage,
  RunAborted,
  type AgentRunner,
  type AgentSession,
  type RunContext,
  type RunOutcome,
} from '../types.js';
import { AgentSetupError } from './workspace-agents.js';
import { ACP_AGENTS, acpAgent, acpAgentLabel } from '../kinds/acp/acp-agents.js';
import { failureCauses, gaveUpText, neededBy, type NeededBy } from './agent-failures.js';
import { RUN_WATCH, watchModel, type GaveUp, type ModelWatch } from './model-watch.js';
import { enforcedHosts, limitNetwork, type NetworkDeps } from './run-network.js';

/** Why a run was stopped: becomes its result message, and says what the session becomes. */
export interface StopReason {
  text: string;
  success: boolean;
  /** The status to set; none when the caller set it already (a PATCH) or a follow-up goes on. */
  status?: SessionStatus;
  /** Another run takes over at once: the session stays marked as worked on. */
  handOver?: boolean;
  /** The server is stopping. */
  shutdown?: boolean;
}

/** A run waiting for a place (or about to start): the prompts it will pass, in order. */
export interface WaitingRun {
  sessionId: string;
  mode: QueuedRun['mode'];
  prompts: string[];
  /** A follow-up to an imported session: where its conversation goes on. */
  continueIn?: ContinueIn;
  /** A follow-up to an imported session: its status before, kept if the run never gets going. */
  statusBefore?: SessionStatus;
}

/** Said in a workspace that asks before agents act, when the run's agent cannot be asked. */
const CANNOT_ASK =
  'This workspace asks before agents act, but this agent cannot put its requests to Session Desk: it runs unattended in its sandbox, as with approvals set to auto. Claude Code, the agents that speak the Agent Client Protocol and the demo agent can be asked.';

/** Said in a workspace that lets agents act but has approval rules, when the run's agent cannot be asked. */
const RULES_CANNOT_APPLY =
  'This workspace has approval rules, but this agent cannot put its requests to Session Desk: the rules do not apply to its runs, which go unattended in their sandbox. Claude Code, the agents that speak the Agent Client Protocol and the demo agent can be asked.';

/**
 * Native Codex (`codex exec`) has no way to put a request to anyone: it is asked through its ACP
 * adapter, which runs the same Codex engine. The run is not switched to the adapter unasked: that
 * would change the program, its session (a follow-up resumes the conversation of the program that
 * began it) and what the workspace chose; the person is told which agent to choose instead.
 */
const CODEX_ASKED_THROUGH = `Codex is asked through its ACP adapter (codex-acp): choose "${acpAgentLabel(ACP_AGENTS.find((a) => a.id === 'codex')!)}" in Settings › Agent.`;

/** Prompts sent while a run waited reach the agent as one, in order, a blank line apart. */
export function joinPrompts(prompts: string[]): string {
  return prompts.join('\n\n');
}

/** What a run needs: the session service and the store, and these of the agent host. */
export interface RunDeps extends FactsDeps, NetworkDeps {
  /** What agents ask before they act, in workspaces that ask. */
  approvals: Pick<Approvals, 'forRun'>;
  dataDir: string;
  /** The folder holding every session's sandbox (checked each time it is asked for). */
  sandboxRoot: () => string;
  runnerFor: (workspaceId: string) => Promise<AgentRunner>;
  /** How a follow-up to an imported session goes on, or an error saying why it cannot. */
  planContinuation: (session: SessionRow, where: ContinueIn) => Continuation;
  /** Runs `work` with an imported session's file held: the follower reads it again once the run ends. */
  holdingFile: <T>(sessionId: string, work: () => Promise<T>) => Promise<T>;
}

/**
 * Starts the run `wanted` (none when the session or what it passes is gone); the promise
 * settles once its end is recorded. `stopReason` says why it was stopped, once `signal` is
 * aborted.
 */
export async function runAgent(
  deps: RunDeps,
  wanted: WaitingRun,
  signal: AbortSignal,
  stopReason: () => StopReason | undefined,
): Promise<void> {
  const { sessionId } = wanted;
  const row = await deps.repos.sessions.find(sessionId);
  const input = await deps.repos.sessions.agentInput(sessionId);
  if (!row || !input) return;
  // An imported session goes on where the follow-up chose: checked again, the folder may be gone.
  let plan: Continuation | AgentSetupError | undefined;
  if (wanted.continueIn !== undefined) {
    try {
      plan = deps.planContinuation(row, wanted.continueIn);
    } catch (err) {
      plan = new AgentSetupError((err as Error).message);
    }
  }
  const continuation = plan instanceof AgentSetupError ? undefined : plan;
  const repoUrl = continuation ? continuation.repoUrl : input.repoUrl;
  const author = await deps.repos.users.findById(row.authorId);
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
  const { service } = deps;
  let recordingProcess: Promise<void> = Promise.resolve();
  const refusals = refusalNotices((message) =>
    service
      .appendMessage(sessionId, message, null)
      .then(() => undefined)
      .catch((err: unknown) =>
        deps.logger.warn(`Could not record a refused connection of ${sessionId}: ${String(err)}`),
      ),
  );
  // A continuation in the person's own folder works there; every other run in its sandbox.
  const sandboxDir = continuation?.cwd ?? sandboxPath(deps.sandboxRoot(), sessionId);
  const cliHome = cliHomePath(deps.sandboxRoot(), sessionId);
  // The model watch (model-watch.ts) ends a run whose model API it cannot reach.
  let watch: ModelWatch | undefined;
  let gaveUp: GaveUp | undefined;
  let programStarted = false;
  /** The model answered this run (text, thinking, a tool call): it was reached, signed in. */
  let modelAnswered = false;
  const unreachable = new AbortController();
  const ctx: RunContext = {
    session,
    sandboxDir,
    ...(continuation?.cwd ? {} : { ownedFolder: sandboxDir }),
    cliHome,
    signal: AbortSignal.any([signal, unreachable.signal]),
    confinement: {
      sandbox: deps.osSandbox(),
      rules: {
        writable: [sandboxDir, cliHome],
        readable: [],
        hidden: [deps.dataDir, deps.sandboxRoot()],
      },
    },
    sink: {
      assistant: async (message) => {
        if (message.notice === undefined) {
          modelAnswered = true;
          watch?.answered();
        }
        await service.appendMessage(sessionId, message, null);
        await recordReportedPullRequest(deps, session, message);
      },
      tasks: (tasks) => service.replaceTasks(sessionId, tasks),
      branch: (name) => service.setBranch(sessionId, name),
    },
    processStarted: (pgid) => {
      programStarted = true;
      watch?.started();
      recordingProcess = service
        .recordProcess(sessionId, pgid)
        .catch((err: unknown) =>
          deps.logger.warn(`Could not record the process of ${sessionId}: ${String(err)}`),
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
  let approvals: RunApprovals | undefined;
  /** Answers what the run's agent still asks as cancelled, saying why (a stop, a follow-up…). */
  const endApprovals = async (): Promise<void> => {
    const reason = stopReason();
    const why: EndReason = !signal.aborted
      ? 'run-ended'
      : reason?.shutdown
        ? 'server-stopped'
        : reason?.handOver
          ? 'follow-up'
          : 'stopped';
    await approvals
      ?.end(why)
      .catch((err: unknown) =>
        deps.logger.error(`Could not record the end of the requests of ${sessionId}: ${String(err)}`),
      );
  };
  return (async () => {
    const started = Date.now();
    let proxy: ProxyLease | undefined;
    let agent: NeededBy | undefined;
    try {
      if (plan instanceof AgentSetupError) throw plan;
      // A branch only in the person's own clone is not in the repository: the clone starts from its default.
      if (continuation?.repoUrl) {
        session.baseBranch = await branchToClone(
          continuation.repoUrl,
          session.baseBranch,
          deps.agentEnvironment(),
        );
      }
      const runner = continuation
        ? createContinuationRunner(continuation, {
            service,
            repos: deps.repos,
            env: deps.agentEnvironment(),
            lookupEnv: deps.lookupEnv,
            timeoutMs:
              (await deps.repos.workspaces.settings(session.workspaceId))?.timeoutMs ??
              DEFAULT_AGENT_TIMEOUT_MS,
          })
        : await deps.runnerFor(session.workspaceId);
      const allowedHosts = (await deps.repos.workspaces.settings(session.workspaceId))?.allowedHosts;
      if (runner.kind !== 'demo' && ctx.confinement)
        proxy = await limitNetwork(deps, allowedHosts, ctx.confinement.rules, refusals.refused);
      agent = neededBy(
        runner.kind,
        runner.acpAgent === undefined ? undefined : acpAgent(runner.acpAgent, deps.dataDir),
      );
      watch = await watchModel({
        family: agent.family,
        env: deps.agentEnvironment(),
        allowedHosts: enforcedHosts(deps, allowedHosts),
        times: RUN_WATCH,
        giveUp: (why) => {
          gaveUp = why;
          unreachable.abort();
        },
      });
      // The demo agent runs no program: there is nothing to hold.
      await service.runStarts(
        sessionId,
        runner.kind,
        runner.kind === 'demo' ? null : deps.osSandbox().isolation,
        runner.acpAgent ?? null,
      );
      approvals = await deps.approvals.forRun(
        session,
        runner.acpAgent ? `acp:${runner.acpAgent}` : runner.kind,
        ctx.sandboxDir,
      );
      if (approvals && runner.asksApproval !== true) {
        const said = approvals.asksByDefault ? CANNOT_ASK : RULES_CANNOT_APPLY;
        const text = runner.kind === 'codex' ? `${said} ${CODEX_ASKED_THROUGH}` : said;
        await service.appendMessage(sessionId, notice(text, 'info'), null);
      } else if (approvals) {
        const asking = approvals;
        ctx.askApproval = (request) => asking.ask(request);
        // A stopped run's agent is told to cancel: what it asked is answered so at once.
        signal.addEventListener('abort', () => void endApprovals(), { once: true });
      }
      // Folders may have changed hands since the start: each run checks its own again.
      if (!continuation?.cwd) {
        secureSessionFolder(deps.sandboxRoot(), deps.dataDir, sessionId, deps.logger);
      }
      const { result } = continuation
        ? await deps.holdingFile(sessionId, () => work(runner))
        : await work(runner);
      watch?.stop();
      await recordingProcess;
      await refusals.end();
      await endApprovals();
      if (signal.aborted || gaveUp) throw new RunAborted();
      // A run that failed before its model answered says why it may have, where Session Desk
      // can tell: no sign-in, or a model API it cannot reach.
      const causes =
        result.is_error && programStarted && !modelAnswered && agent
          ? await failureCauses(
              agent,
              { agent: deps.agentEnvironment(), server: deps.lookupEnv },
              enforcedHosts(deps, allowedHosts),
            )
          : undefined;
      if (causes) result.result = result.result ? `${result.result}\n\n${causes}` : causes;
      await recordBranchAtEnd(deps, session, ctx.sandboxDir, deps.agentEnvironment());
      await service.finish(sessionId, result, result.is_error ? 'failed' : 'completed', { outcome: true });
    } catch (err) {
      watch?.stop();
      await recordingProcess;
      await refusals.end();
      await endApprovals();
      const stopped = signal.aborted;
      const reason = stopReason();
      // Thrown while the run was being set up, before any program of it started.
      const setUp =
        err instanceof SandboxError ||
        err instanceof SandboxRootError ||
        err instanceof AgentSetupError ||
        err instanceof NamedCommandsError;
      const text = stopped
        ? (reason?.text ?? 'Stopped.')
        : gaveUp && agent
          ? gaveUpText(agent, gaveUp)
          : setUp
            ? err.message
            : `The agent failed: ${err instanceof Error ? err.message : String(err)}`;
      // A stop by PATCH has already set the status; a failure sets it to failed, but an imported
      // session whose continuation never got going is as it was: its CLI's run is what it shows.
      const status: SessionStatus | null = stopped
        ? (reason?.status ?? null)
        : setUp && wanted.statusBefore !== undefined
          ? wanted.statusBefore
          : 'failed';
      await recordBranchAtEnd(deps, session, ctx.sandboxDir, deps.agentEnvironment());
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
          deps.logger.error(`Could not record the end of ${sessionId}: ${String(writeErr)}`),
        );
    } finally {
      await proxy?.close();
    }
  })();
}
