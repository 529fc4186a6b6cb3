import type { AssistantMessage, ResultMessage } from '../../../../src-shared/sessions.js';
import { roundDollars } from '../../../store/session-row.js';
import type { AgentEvent, AgentUsage } from '../../agent-events.js';
import {
  bindConversation,
  copyConversation,
  personCliFolder,
  prepareCliHome,
  sessionCliFolder,
} from './cli-homes.js';
import type { CliKindSpec } from '../cli-kinds.js';
import { findConversationFile } from './conversation-files.js';
import { LINE_MAX_BYTES, splitLines } from '../../process/line-splitter.js';
import { appendWithinCap, notice, oversizeLineText } from '../../output-caps.js';
import { runProcess } from '../../process/process-run.js';
import { installRoot } from '../../executables.js';
import { locateProgram } from './programs.js';
import { prepareFirstRun, prepareRunFolder } from '../../sandbox/session-folder.js';
import {
  withFolders,
  resultMessage,
  RunAborted,
  type AgentRunner,
  type RunContext,
  type RunOutcome,
} from '../../types.js';

/** What a CLI run keeps beyond its transcript: the conversation to resume, and its usage. */
export interface CliRunStore {
  /** The session's conversation with this kind, if any, and what its earlier runs used. */
  previous(sessionId: string): Promise<{ conversationId?: string; usageBefore?: AgentUsage }>;
  conversation(sessionId: string, id: string): Promise<void>;
  finished(sessionId: string, run: { conversationId?: string | undefined; usage: AgentUsage }): Promise<void>;
}

export interface CliAgentOptions {
  spec: CliKindSpec;
  /** The environment the program runs with: the agents' allow-listed one. */
  env: NodeJS.ProcessEnv;
  /**
   * Where the program is looked up (PATH, and its SESSIONDESK_*_BIN variable): the server's
   * own environment, which agents never see whole. `env` when unset.
   */
  lookupEnv?: NodeJS.ProcessEnv;
  timeoutMs: number;
  runs: CliRunStore;
  /** Longest output line read; longer ones are skipped with a notice. */
  lineMaxBytes?: number;
  /**
   * The file of the conversation a continuation resumes (an imported session's), copied into
   * the session's CLI home before the first run; else the person's folder is looked in.
   */
  conversationFile?: string;
}

/** Events waiting to be written before the program's output is paused. */
const QUEUE_HIGH_WATER = 256;

/**
 * How long a CLI that has printed its result may take to exit before it is ended: one waiting
 * on a background task it started would otherwise hold the finished run open.
 */
const LINGER_GRACE_MS = 1500;

/** Usage as it is kept: the cost rounded as every stored amount is. */
export function roundedUsage(usage: AgentUsage): AgentUsage {
  const rounded = { ...usage };
  if (rounded.costUsd !== undefined) rounded.costUsd = roundDollars(rounded.costUsd);
  return rounded;
}

/**
 * Runs one of the agent CLIs Session Desk knows (Claude Code, Codex, Gemini CLI) in the
 * session's sandbox with its own command line, reads its output line by line with its own
 * parser, and records what it does as it does it. A follow-up resumes the CLI's conversation.
 */
export function createCliAgent(options: CliAgentOptions): AgentRunner {
  const { spec, runs } = options;

  /** `resume`: continue the session's conversation with this CLI, if it has one. */
  async function run(ctx: RunContext, prompt: string, resume = true): Promise<RunOutcome> {
    const started = Date.now();
    const sessionId = ctx.session.id;
    // Session Desk's own folders (its data, the sandboxes with the CLI homes) never hold a program it runs.
    const located = locateProgram(spec.kind, options.lookupEnv ?? options.env, ctx.confinement?.rules.hidden);
    if (!located.found) return { result: resultMessage(false, located.problem, 0, 0) };
    if (ctx.signal.aborted) throw new RunAborted();

    const previous = resume ? await runs.previous(sessionId) : {};
    const asking = ctx.askApproval && spec.permissionPrompts ? ctx.askApproval : undefined;
    const { args, stdin } = spec.command({
      prompt,
      model: ctx.session.model,
      resumeId: previous.conversationId,
      asksPermission: asking !== undefined,
    });
    const parser = spec.parser(previous.usageBefore ? { usageBefore: previous.usageBefore } : {});
    // Ends a run that lingers after its result the way a stop would, whatever ends a stop.
    const lingering = new AbortController();
    let lingerTimer: NodeJS.Timeout | undefined;
    const { stderrEvents } = spec;
    const home = ctx.cliHome ? await prepareCliHome(ctx.cliHome, [spec.kind], options.env) : undefined;
    const env = { ...options.env, ...home?.env };
    const conversation =
      ctx.cliHome && previous.conversationId !== undefined
        ? await carryConversation(ctx, ctx.cliHome, previous.conversationId)
        : undefined;
    const child = runProcess({
      program: located.path,
      args,
      cwd: ctx.sandboxDir,
      env: { ...env, SESSIONDESK_SESSION_ID: sessionId },
      stdin: asking ? { open: true } : (stdin ?? ''),
      timeoutMs: options.timeoutMs,
      signal: AbortSignal.any([ctx.signal, lingering.signal]),
      onStart: ctx.processStarted,
      onStderrLine: stderrEvents && ((line) => enqueue(stderrEvents(line))),
      confine: withFolders(ctx.confinement, {
        readable: [installRoot(located.path, options.env.HOME)],
        files: conversation ? [conversation] : [],
      }),
      ownedFolder: ctx.ownedFolder,
    });
    for (const note of home?.notes ?? []) enqueue([{ kind: 'notice', level: 'info', text: note }]);
    const prompts =
      asking &&
      spec.permissionPrompts?.({
        stdin: child.stdin,
        ask: async (request) => {
          const resume = child.pauseTimeout();
          try {
            return await asking(request);
          } finally {
            resume();
          }
        },
        recorded: () => recording,
        problem: (text) => enqueue([{ kind: 'notice', level: 'error', text }]),
      });
    prompts?.prompt(prompt);

    let conversationId = previous.conversationId;
    let usage: AgentUsage | undefined;
    let ending: { result: ResultMessage; errorSubtype?: string } | undefined;
    let recording: Promise<void> = Promise.resolve();
    let queued = 0;

    const append = (message: AssistantMessage) => appendWithinCap(ctx.sink, message);

    async function record(event: AgentEvent): Promise<void> {
      switch (event.kind) {
        case 'assistant': {
          const message: AssistantMessage = { type: 'assistant', message: { content: event.content } };
          if (event.parentToolUseId !== undefined) message.parent_tool_use_id = event.parentToolUseId;
          return append(message);
        }
        case 'notice':
          return append(notice(event.text, event.level));
        case 'tasks':
          return ctx.sink.tasks(event.tasks);
        case 'conversation':
          conversationId = event.id;
          return runs.conversation(sessionId, event.id);
        case 'usage':
          // Each report holds the run's totals so far.
          usage = roundedUsage(event.usage);
          return;
        case 'result':
          // Its stream of prompts ends with the run's one: the CLI exits.
          prompts?.end();
          ending = event.errorSubtype === undefined ? { result: event.result } : event;
          lingerTimer ??= setTimeout(() => lingering.abort(), LINGER_GRACE_MS);
          return;
      }
    }

    function enqueue(events: AgentEvent[]): void {
      for (const event of events) {
        queued += 1;
        if (queued > QUEUE_HIGH_WATER) child.stdout.pause();
        // In order, one at a time: each is a durable write.
        recording = recording.then(async () => {
          await record(event);
          queued -= 1;
          if (queued <= QUEUE_HIGH_WATER / 2 && child.stdout.isPaused()) child.stdout.resume();
        });
      }
    }

    const lineMax = options.lineMaxBytes ?? LINE_MAX_BYTES;
    const reading = splitLines(child.stdout, lineMax, {
      line: (text) => {
        if (!prompts || !prompts.line(text)) enqueue(parser.line(text));
      },
      oversize: (bytes) =>
        enqueue([
          {
            kind: 'notice',
            level: 'error',
            text: oversizeLineText(bytes, lineMax),
          },
        ]),
    }).catch(() => undefined);
    const exit = await child.ended;
    clearTimeout(lingerTimer);
    await reading;
    const refusal = exit.stderrTail.split('\n').find((line) => spec.refusedResume.test(line));
    if (
      previous.conversationId !== undefined &&
      refusal !== undefined &&
      !ctx.signal.aborted &&
      !exit.timedOut &&
      exit.code !== 0
    ) {
      // The CLI no longer has the conversation: the prompt goes to a new one rather than
      // failing the session, and the transcript says the earlier context is gone.
      await recording;
      await append(
        notice(
          `${spec.name} could not resume its earlier conversation (${refusal.trim()}). ` +
            'This prompt starts a new conversation, without the earlier context.',
          'info',
        ),
      );
      return run(ctx, prompt, false);
    }
    // Tool calls and tasks left open are closed, however the run ended.
    enqueue(parser.end());
    await recording;
    if (!ending && conversationId !== undefined && spec.loggedUsage) {
      // Ended before the line that reports usage: what the CLI logged as it went, which is
      // whole where what it printed so far may count a response only as it started.
      const logged = await spec
        .loggedUsage({
          env,
          conversationId,
          prompt,
          // The imported conversation's own file, when this run resumed it (not a new one).
          file: conversationId === previous.conversationId ? options.conversationFile : undefined,
        })
        .catch(() => null);
      if (logged) usage = roundedUsage(logged);
    }
    if (usage) await runs.finished(sessionId, { conversationId, usage });
    // A stopped run's result says what it used until then.
    if (ctx.signal.aborted) throw new RunAborted(usage);

    const elapsed = Date.now() - started;
    const tail = exit.stderrTail;
    const withTail = (text: string) => (tail ? `${text}\n\n${tail}` : text);
    let result: ResultMessage;
    if (exit.error) {
      result = resultMessage(false, `${spec.name} could not start: ${exit.error.message}`, elapsed, 0);
    } else if (exit.timedOut) {
      result = resultMessage(
        false,
        withTail(
          `${spec.name} did not finish within ${Math.round(options.timeoutMs / 1000)} s and was stopped.`,
        ),
        elapsed,
        0,
      );
      result.error_subtype = 'timeout';
    } else if (ending) {
      result = { ...ending.result };
      if (ending.errorSubtype !== undefined) result.error_subtype = ending.errorSubtype;
      // A CLI that reports no duration (Codex) gets the run's own.
      if (result.duration_ms === 0) result.duration_ms = elapsed;
    } else if (exit.code === 0) {
      result = resultMessage(true, `${spec.name} finished without a result.`, elapsed, 0);
    } else {
      result = resultMessage(false, withTail(`${spec.name} exited with code ${exit.code}.`), elapsed, 0);
    }
    if (usage) result.usage = usage;
    return { result };
  }

  /**
   * The conversation a run resumes, in the session's home: an imported session's own file bound
   * in (returned, for the sandbox), or a copy of one an earlier version kept in the person's folder.
   */
  async function carryConversation(ctx: RunContext, home: string, conversationId: string) {
    if (options.conversationFile !== undefined) {
      const sandboxed = ctx.confinement?.sandbox.isolation === 'sandbox';
      return bindConversation(spec.kind, home, options.conversationFile, ctx.sandboxDir, sandboxed);
    }
    if (await findConversationFile(spec.kind, sessionCliFolder(spec.kind, home), conversationId))
      return undefined;
    const file = await findConversationFile(
      spec.kind,
      personCliFolder(spec.kind, options.env),
      conversationId,
    );
    if (file) await copyConversation(spec.kind, home, file, ctx.sandboxDir);
    return undefined;
  }

  return {
    kind: spec.kind,
    asksApproval: spec.permissionPrompts !== undefined,
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
