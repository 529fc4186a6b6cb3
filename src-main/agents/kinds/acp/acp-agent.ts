import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk/unstable';
import type { AssistantMessage, ResultMessage } from '../../../../src-shared/sessions.js';
import type { AgentEvent, AgentUsage } from '../../agent-events.js';
import { appendWithinCap, notice } from '../../output-caps.js';
import { runProcess } from '../../process/process-run.js';
import { prepareFirstRun, prepareRunFolder } from '../../sandbox/session-folder.js';
import {
  resultMessage,
  RunAborted,
  withFolders,
  type AgentRunner,
  type RunContext,
  type RunOutcome,
} from '../../types.js';
import { prepareCliHome } from '../cli/cli-homes.js';
import { commandFolders } from '../command/command-agent.js';
import { roundedUsage, type CliRunStore } from '../cli/cli-agent.js';
import { locateAgentProgram } from '../cli/programs.js';
import { CLI_KIND_SPECS } from '../cli-kinds.js';
import type { AcpAgentSpec } from './acp-agents.js';
import { readTextFile, RefusedFileRequest, writeTextFile } from './acp-files.js';
import { permissionAnswer, permissionRequest, rejectionPrompt, type Rejection } from './acp-permissions.js';
import { createAcpTerminals, RefusedTerminalRequest } from './acp-terminals.js';
import { createAcpTranscript, UNKNOWN_UPDATE_METHOD, withUnknownUpdates } from './acp-updates.js';

export interface AcpAgentOptions {
  spec: AcpAgentSpec;
  /** The environment the agent runs with: the agents' allow-listed one. */
  env: NodeJS.ProcessEnv;
  /** Where its program is looked up (the server's own environment); `env` when unset. */
  lookupEnv?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** The agent's session id, kept on the session as a CLI's conversation is, and the usage. */
  runs: CliRunStore;
}

/** How long an agent gets to answer `session/cancel` before its process is ended. */
const CANCEL_GRACE_MS = 2000;
/** How long an agent whose turn is over gets to exit once its input has ended. */
const EXIT_GRACE_MS = 1500;
/**
 * After `session/load`, how long the agent must stay quiet before the prompt goes: an agent may
 * answer the load before it has replayed the history (Gemini CLI streams it after its answer), and
 * what it replays is never this turn's. At most REPLAY_WAIT_MAX_MS is spent waiting.
 */
const REPLAY_QUIET_MS = 300;
const REPLAY_WAIT_MAX_MS = 5000;

/**
 * The permission a run in "auto" mode gives: the agent works inside the session's sandbox,
 * where every tool call is allowed (the workspace's approvals setting decides otherwise).
 */
function allowOnce(request: RequestPermissionRequest): RequestPermissionResponse {
  const option =
    request.options.find((o) => o.kind === 'allow_once') ??
    request.options.find((o) => o.kind === 'allow_always');
  return option
    ? { outcome: { outcome: 'selected', optionId: option.optionId } }
    : { outcome: { outcome: 'cancelled' } };
}

/** An agent with no native CLI home keeps its state under the session's home all the same. */
function xdgFolders(home: string): Record<string, string> {
  return {
    XDG_CONFIG_HOME: join(home, 'acp', 'config'),
    XDG_DATA_HOME: join(home, 'acp', 'data'),
    XDG_STATE_HOME: join(home, 'acp', 'state'),
    XDG_CACHE_HOME: join(home, 'acp', 'cache'),
  };
}

/** The result of a turn by its stop reason (`end_turn` is the agent's own success). */
function turnResult(stopReason: string, text: string, elapsed: number): ResultMessage {
  if (stopReason === 'end_turn') return resultMessage(true, text, elapsed, 1);
  const why: Record<string, string> = {
    max_tokens: 'The agent stopped: the model reached its token limit.',
    max_turn_requests: 'The agent stopped: it reached its limit of model requests for one prompt.',
    refusal: 'The agent refused to go on with this prompt.',
  };
  const result = resultMessage(false, why[stopReason] ?? `The agent stopped (${stopReason}).`, elapsed, 1);
  result.error_subtype = stopReason;
  return result;
}

/**
 * Runs an agent that speaks the Agent Client Protocol: its program started in ACP mode in the
 * session's sandbox, one process per run as for the CLI kinds. Session Desk is the client: it
 * opens (or, on a follow-up, loads) the agent's session and sends the prompt; what the agent
 * streams becomes the transcript. The agent acts with its own tools inside the sandbox; the
 * client offers it the session folder's files (acp-files.ts) and terminals sandboxed as it is
 * (acp-terminals.ts), refusing anything else it asks (saying so in the transcript).
 */
export function createAcpAgent(options: AcpAgentOptions): AgentRunner {
  const { spec, runs } = options;

  async function run(ctx: RunContext, prompt: string): Promise<RunOutcome> {
    const started = Date.now();
    const sessionId = ctx.session.id;
    const lookupEnv = options.lookupEnv ?? options.env;
    // Session Desk's own folders (its data, the sandboxes with the CLI homes) never hold a program it runs.
    const located = locateAgentProgram(spec, lookupEnv, ctx.confinement?.rules.hidden);
    if (!located.found) return { result: resultMessage(false, located.problem, 0, 0) };
    if (ctx.signal.aborted) throw new RunAborted();

    // The SDK builds its schemas as it loads (about 200 ms of CPU): it loads at the first ACP run,
    // not at every start of the server.
    const { client, ndJsonStream, PROTOCOL_VERSION, RequestError } =
      await import('@agentclientprotocol/sdk/unstable');
    const previous = await runs.previous(sessionId);
    const home = ctx.cliHome
      ? await prepareCliHome(ctx.cliHome, spec.home ? [spec.home] : [], options.env)
      : undefined;
    const own =
      ctx.cliHome && spec.seed
        ? await spec.seed(join(ctx.cliHome, 'acp', spec.id), ctx.cliHome, options.env, home?.notes ?? [])
        : {};
    const env = {
      ...options.env,
      ...spec.env,
      ...(ctx.cliHome && !spec.home && !spec.seed ? xdgFolders(ctx.cliHome) : {}),
      ...home?.env,
      ...own,
      SESSIONDESK_SESSION_ID: sessionId,
    };
    const ending = new AbortController();
    // An administrator's agent may name its script or configuration by path, as a command does.
    const confine = withFolders(ctx.confinement, commandFolders(located.path, [...spec.args], options.env));
    const child = runProcess({
      program: located.path,
      args: [...spec.args],
      cwd: ctx.sandboxDir,
      env,
      stdin: { open: true },
      timeoutMs: options.timeoutMs,
      signal: ending.signal,
      onStart: ctx.processStarted,
      confine,
      ownedFolder: ctx.ownedFolder,
    });

    const terminals = createAcpTerminals({
      folder: ctx.sandboxDir,
      env,
      confinement: confine,
      ownedFolder: ctx.ownedFolder,
      timeoutMs: options.timeoutMs,
      unshown: (terminal) => enqueue(transcript.terminal(terminal)),
    });
    const transcript = createAcpTranscript(terminals);
    let recording: Promise<void> = Promise.resolve();
    let lastText = '';
    const append = (message: AssistantMessage) => appendWithinCap(ctx.sink, message);
    const record = (event: AgentEvent): Promise<void> => {
      switch (event.kind) {
        case 'assistant': {
          const text = event.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
          if (text) lastText = text;
          return append({ type: 'assistant', message: { content: event.content } });
        }
        case 'notice':
          return append(notice(event.text, event.level));
        case 'tasks':
          return ctx.sink.tasks(event.tasks);
        default:
          return Promise.resolve();
      }
    };
    const enqueue = (events: AgentEvent[]) => {
      for (const event of events) recording = recording.then(() => record(event));
    };
    for (const note of home?.notes ?? []) enqueue([{ kind: 'notice', level: 'info', text: note }]);

    /** A request answered, or refused with the reason in the transcript too. */
    async function refusing<T>(request: string, data: object, serve: () => T | Promise<T>): Promise<T> {
      try {
        return await serve();
      } catch (err) {
        if (!(err instanceof RefusedFileRequest || err instanceof RefusedTerminalRequest)) throw err;
        const serves = err instanceof RefusedFileRequest ? " It serves only the session's folder." : '';
        enqueue([
          {
            kind: 'notice',
            level: 'error',
            text: `Session Desk refused the agent's request to ${request}: ${err.message}.${serves}`,
          },
        ]);
        throw RequestError.invalidParams(data, err.message);
      }
    }
    function servingFiles<T>(verb: string, path: unknown, serve: () => Promise<T>): Promise<T> {
      if (!spec.clientFiles) throw RequestError.methodNotFound(`fs/${verb}_text_file`);
      return refusing(`${verb} ${String(path)}`, { path }, serve);
    }
    /** What the agent sent that this version does not use, each said once a run. */
    const noticed = new Set<string>();
    const noticeOnce = (method: string, text: string) => {
      if (noticed.has(method)) return;
      noticed.add(method);
      enqueue([{ kind: 'notice', level: 'info', text }]);
    };

    // The agent's session, once open; updates of another (or while an old one is replayed) are not this turn's.
    let agentSession: string | undefined;
    let replaying = false;
    /** When the agent's session last sent an update (the replay's end is found by its quiet). */
    let lastUpdateAt = 0;
    /** The turn's last rejection: an agent that ends its turn at it is told in a prompt of its own. */
    let rejected: Rejection | undefined;
    const app = client()
      .onNotification('session/update', ({ params }) => {
        if (params.sessionId !== agentSession) return;
        lastUpdateAt = Date.now();
        if (replaying) return;
        enqueue(transcript.update(params.update));
      })
      .onRequest('session/request_permission', async ({ params }) => {
        if (params.sessionId === agentSession) enqueue(transcript.permissionAsked(params.toolCall));
        if (!ctx.askApproval) return allowOnce(params);
        // The request follows the call it is about in the transcript.
        await recording;
        const resume = child.pauseTimeout();
        try {
          const request = permissionRequest(params);
          const answer = await ctx.askApproval(request);
          if (answer.decision.startsWith('reject_'))
            rejected = {
              title: request.title,
              ...(answer.message === undefined ? {} : { message: answer.message }),
            };
          return permissionAnswer(answer);
        } finally {
          resume();
        }
      })
      .onRequest('fs/read_text_file', ({ params }) =>
        servingFiles('read', params.path, () => readTextFile(ctx.sandboxDir, params)),
      )
      .onRequest('fs/write_text_file', ({ params }) =>
        servingFiles('write', params.path, () => writeTextFile(ctx.sandboxDir, params)),
      )
      .onRequest('terminal/create', ({ params }) =>
        refusing(`run ${params.command} in a terminal`, { cwd: params.cwd ?? null }, () =>
          terminals.create(params),
        ),
      )
      .onRequest('terminal/output', ({ params }) =>
        refusing('read a terminal', {}, () => terminals.output(params.terminalId)),
      )
      .onRequest('terminal/wait_for_exit', ({ params }) =>
        refusing('wait for a terminal', {}, () => terminals.waitForExit(params.terminalId)),
      )
      .onRequest('terminal/kill', ({ params }) =>
        refusing('kill a terminal', {}, () => terminals.kill(params.terminalId)),
      )
      .onRequest('terminal/release', ({ params }) =>
        refusing('release a terminal', {}, () => terminals.release(params.terminalId)),
      )
      .onRequest('*', ({ method }) => {
        noticeOnce(
          `request ${method}`,
          `The agent asked Session Desk to ${method}, which this version does not offer: refused.`,
        );
        throw RequestError.methodNotFound(method);
      })
      .onNotification('*', ({ method, params }) => {
        if (method === UNKNOWN_UPDATE_METHOD) {
          const notification = params as { sessionId?: unknown; update?: unknown } | null;
          if (!notification || notification.sessionId !== agentSession) return;
          lastUpdateAt = Date.now();
          if (!replaying) enqueue(transcript.update(notification.update));
          return;
        }
        noticeOnce(`notification ${method}`, `The agent sent ${method}, which Session Desk does not use.`);
      });
    const connection = app.connect(
      withUnknownUpdates(
        ndJsonStream(
          Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
        ),
      ),
    );
    const agent = connection.agent;
    const exited = child.ended.then((exit) => {
      connection.close(new Error('the agent exited'));
      return exit;
    });
    const stopped = () => ctx.signal.aborted;
    const onStop = () => {
      terminals.stopAll();
      if (agentSession !== undefined)
        void agent.notify('session/cancel', { sessionId: agentSession }).catch(() => undefined);
      setTimeout(() => ending.abort(), CANCEL_GRACE_MS).unref();
    };
    ctx.signal.addEventListener('abort', onStop, { once: true });

    /** One turn of the agent's session: the prompt sent, the turn's transcript closed at its end. */
    async function promptTurn(session: string, text: string) {
      rejected = undefined;
      const answer = await agent.request('session/prompt', {
        sessionId: session,
        prompt: [{ type: 'text', text }],
      });
      // The run's terminals end with its last turn, before the turn's open calls are closed.
      if (!endedAtRejection(answer)) await terminals.close();
      enqueue(transcript.end());
      return answer;
    }

    const endedAtRejection = (answer: { stopReason: string }) =>
      answer.stopReason === 'cancelled' && !stopped() && rejected !== undefined;

    /** Whether the agent could not take up its earlier session: the transcript says why. */
    const startsAfresh = (why: string) =>
      enqueue([
        {
          kind: 'notice',
          level: 'info',
          text: `${spec.name} ${why}. This prompt starts a new session, without the earlier context.`,
        },
      ]);
    const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

    /**
     * The agent's earlier session taken up again, or undefined when it cannot be: resumed where the
     * agent offers `session/resume` (nothing is replayed), else loaded (its history replayed, which
     * is not this turn's), else a new one. A resume the agent refuses falls back to a load.
     */
    async function continued(
      id: string,
      capabilities: { loadSession?: boolean; sessionCapabilities?: { resume?: unknown } | null } | undefined,
    ): Promise<string | undefined> {
      const canLoad = capabilities?.loadSession === true;
      agentSession = id;
      if (capabilities?.sessionCapabilities?.resume != null) {
        const resumed = await agent
          .request('session/resume', { sessionId: id, cwd: ctx.sandboxDir, mcpServers: [] })
          .then(
            () => true,
            (err: unknown) => {
              if (!canLoad) startsAfresh(`could not resume its earlier session (${reason(err)})`);
              return false;
            },
          );
        if (resumed) return id;
      }
      if (!canLoad) {
        if (capabilities?.sessionCapabilities?.resume == null)
          startsAfresh('cannot resume or load an earlier session');
        return undefined;
      }
      replaying = true;
      const loaded = await agent
        .request('session/load', { sessionId: id, cwd: ctx.sandboxDir, mcpServers: [] })
        .then(
          () => true,
          (err: unknown) => {
            startsAfresh(`could not load its earlier session (${reason(err)})`);
            return false;
          },
        );
      if (!loaded) return undefined;
      await replayQuiet(() => lastUpdateAt);
      return id;
    }

    /**
     * The run's usage as the agent reported it (its answer, its updates' costs); where that holds
     * no tokens (a stop, or an agent that reports none) and the agent runs a native CLI's engine,
     * the tokens that engine logged of this run's prompt, as a stopped run of that CLI counts them.
     */
    async function runUsage(answer: unknown): Promise<AgentUsage | undefined> {
      const reported = transcript.usage(answer);
      const tokens = reported ? reported.inputTokens + reported.outputTokens + reported.cacheReadTokens : 0;
      const loggedUsage = spec.home === undefined ? undefined : CLI_KIND_SPECS[spec.home].loggedUsage;
      const logged =
        tokens === 0 && loggedUsage && agentSession !== undefined
          ? await loggedUsage({ env, conversationId: agentSession, prompt }).catch(() => null)
          : null;
      if (!logged) return reported ? roundedUsage(reported) : undefined;
      // The agent's own cost, where it reported one, over the price table's.
      const cost = reported?.costUsd ?? logged.costUsd;
      return roundedUsage({ ...logged, ...(cost === undefined ? {} : { costUsd: cost }) });
    }

    /** The last turn's answer, once it came: what it reports of the run's usage. */
    let answered: unknown;
    let outcome: ResultMessage;
    try {
      const init = await agent.request('initialize', {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: spec.clientFiles, writeTextFile: spec.clientFiles },
          terminal: true,
        },
        clientInfo: { name: 'sessiondesk', title: 'Session Desk', version: '1' },
      });
      if (init.protocolVersion !== PROTOCOL_VERSION) {
        throw new Error(
          `${spec.name} speaks version ${init.protocolVersion} of the Agent Client Protocol; Session Desk speaks version ${PROTOCOL_VERSION}.`,
        );
      }
      if (previous.conversationId !== undefined)
        agentSession = await continued(previous.conversationId, init.agentCapabilities);
      if (agentSession === undefined) {
        const opened = await agent.request('session/new', { cwd: ctx.sandboxDir, mcpServers: [] });
        agentSession = opened.sessionId;
        await runs.conversation(sessionId, opened.sessionId);
      }
      replaying = false;
      let answer = await promptTurn(agentSession, prompt);
      // Ended at a rejection, not by a stop: the agent waits to hear what to do instead.
      while (endedAtRejection(answer)) {
        enqueue([
          {
            kind: 'notice',
            level: 'info',
            text: `${spec.name} ended its turn at the rejection. Session Desk tells it that it was rejected, with what the person said, and it goes on.`,
          },
        ]);
        answer = await promptTurn(agentSession, rejectionPrompt(rejected!));
      }
      answered = answer;
      await recording;
      outcome = turnResult(answer.stopReason, lastText, Date.now() - started);
      if (answer.stopReason === 'cancelled' || stopped()) outcome = resultMessage(false, 'stopped', 0, 0);
    } catch (err) {
      await terminals.close();
      enqueue(transcript.end());
      await recording;
      outcome = resultMessage(
        false,
        stopped() ? 'stopped' : `${spec.name} failed: ${err instanceof Error ? err.message : String(err)}`,
        Date.now() - started,
        0,
      );
    } finally {
      ctx.signal.removeEventListener('abort', onStop);
      // The turn is over: the agent's input ends, and whatever it left running is ended with it.
      child.stdin.end();
      setTimeout(() => ending.abort(), EXIT_GRACE_MS).unref();
    }
    const exit = await exited;
    await recording;
    const usage = await runUsage(answered);
    if (usage) await runs.finished(sessionId, { conversationId: agentSession, usage });
    if (stopped()) throw new RunAborted(usage);
    if (!outcome.is_error || exit.code === 0 || exit.code === null) {
      if (usage) outcome.usage = usage;
      return { result: outcome };
    }
    const withTail = exit.stderrTail ? `${outcome.result}\n\n${exit.stderrTail}` : outcome.result;
    outcome.result = withTail;
    if (usage) outcome.usage = usage;
    return { result: outcome };
  }

  return {
    kind: 'acp',
    acpAgent: spec.id,
    asksApproval: true,
    async start(ctx, prompt) {
      await prepareFirstRun(ctx, options.env);
      return run(ctx, prompt ?? ctx.session.title);
    },
    async followUp(ctx, text) {
      await prepareRunFolder(ctx, options.env);
      return run(ctx, text);
    },
  };
}

/**
 * Resolves once no update has come for REPLAY_QUIET_MS (counted from now at the earliest), or
 * after REPLAY_WAIT_MAX_MS: the end of a replay an agent sends after answering `session/load`.
 */
async function replayQuiet(lastUpdateAt: () => number): Promise<void> {
  const since = Date.now();
  const deadline = since + REPLAY_WAIT_MAX_MS;
  for (;;) {
    const quietFrom = Math.max(since, lastUpdateAt());
    const left = Math.min(quietFrom + REPLAY_QUIET_MS, deadline) - Date.now();
    if (left <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, left));
  }
}
