import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { mapStreamLine } from '../claude-code/stream-json.js';
import {
  branchName,
  resultMessage,
  RunAborted,
  withFolders,
  type AgentRunner,
  type RunContext,
  type RunOutcome,
} from '../../types.js';
import { LINE_MAX_BYTES, splitLines } from '../../process/line-splitter.js';
import { appendWithinCap, notice, oversizeLineText } from '../../output-caps.js';
import { prepareCliHome } from '../cli/cli-homes.js';
import { CLI_KINDS } from '../cli-kind-names.js';
import { folderHolding, installRoot, locateExecutable } from '../../executables.js';
import { runProcess } from '../../process/process-run.js';
import { prepareSandbox } from '../../sandbox/session-folder.js';

export interface CommandAgentOptions {
  /**
   * Program and arguments; `{prompt}`, `{model}` and `{sessionId}` are replaced, each inside
   * one argument. Without `{prompt}`, the prompt goes to the program's stdin.
   */
  command: string[];
  timeoutMs: number;
  /** The allow-listed environment the program runs with (never the server's own). */
  environment: NodeJS.ProcessEnv;
}

export const DEFAULT_AGENT_TIMEOUT_MS = 30 * 60 * 1000;

/** A substituted value would reach the program as an option: the run is refused. */
export class UnsafeArgumentError extends Error {}

/**
 * Fills the placeholders of a command template. Never a shell: each element stays one
 * argument. A value must never turn an argument into an option (a prompt such as
 * `--dangerously-skip-permissions` read as a flag): an argument that would start with `-`
 * only because of what was put into it is refused, unless it comes after a `--` in the
 * template, where programs take arguments as plain text.
 */
export function expandCommand(
  template: string[],
  values: { prompt: string; model: string; sessionId: string },
): string[] {
  let afterDoubleDash = false;
  return template.map((arg, index) => {
    const expanded = arg
      .replaceAll('{prompt}', values.prompt)
      .replaceAll('{model}', values.model)
      .replaceAll('{sessionId}', values.sessionId);
    if (index > 0 && !afterDoubleDash && expanded.startsWith('-') && !arg.startsWith('-')) {
      throw new UnsafeArgumentError(
        `The prompt (or model) starts with "-", so the agent command would read it as an option; it was not run. ` +
          'Reword the prompt, or ask the administrator to pass the prompt on stdin (leave {prompt} out of the command) or after "--".',
      );
    }
    if (arg === '--') afterDoubleDash = true;
    return expanded;
  });
}

/** Whether the template takes the prompt as an argument; if not, it is sent on stdin. */
export function takesPromptArgument(template: string[]): boolean {
  return template.some((arg) => arg.includes('{prompt}'));
}

/**
 * What an administrator's command may see in the sandbox besides the session's folder and its
 * CLI home: its program's install, and the files and folders its arguments name by absolute path
 * (a script, a configuration).
 */
export function commandFolders(
  located: string | undefined,
  args: string[],
  env: NodeJS.ProcessEnv,
): { readable: string[] } {
  const readable = [
    ...(located === undefined ? [] : [installRoot(located, env.HOME)]),
    ...args.filter((arg) => isAbsolute(arg) && existsSync(arg)),
  ];
  return { readable };
}

/**
 * Runs a local agent CLI (one that prints stream-json, one JSON message per line) in the
 * session's sandbox, and records what it prints as it prints it.
 */
export function createCommandAgent(options: CommandAgentOptions): AgentRunner {
  async function run(ctx: RunContext, prompt: string): Promise<RunOutcome> {
    const started = Date.now();
    let expanded: string[];
    try {
      expanded = expandCommand(options.command, {
        prompt,
        model: ctx.session.model,
        sessionId: ctx.session.id,
      });
    } catch (err) {
      if (err instanceof UnsafeArgumentError) return { result: resultMessage(false, err.message, 0, 0) };
      throw err;
    }
    const [program, ...args] = expanded;
    if (!program) throw new Error('the agent command is empty');
    if (ctx.signal.aborted) throw new RunAborted();
    const promptOnStdin = !takesPromptArgument(options.command);
    const located = isAbsolute(program)
      ? program
      : (() => {
          const found = locateExecutable({ name: program, program, envVar: '' }, options.environment);
          return found.found ? found.path : undefined;
        })();
    const holding = located && folderHolding(located, ctx.confinement?.rules.hidden ?? []);
    if (holding !== undefined) {
      return {
        result: resultMessage(
          false,
          `The agent command's program ${program} lies in ${holding}, where agents write or Session Desk keeps its data: Session Desk never runs a program an agent could have replaced.`,
          0,
          0,
        ),
      };
    }

    // Such commands are often one of the agent CLIs: each finds its state in the session's home.
    const home = ctx.cliHome ? await prepareCliHome(ctx.cliHome, CLI_KINDS, options.environment) : undefined;
    const child = runProcess({
      program,
      args,
      cwd: ctx.sandboxDir,
      env: { ...options.environment, ...home?.env, SESSIONDESK_SESSION_ID: ctx.session.id },
      stdin: promptOnStdin ? prompt : '',
      timeoutMs: options.timeoutMs,
      signal: ctx.signal,
      onStart: ctx.processStarted,
      confine: withFolders(ctx.confinement, commandFolders(located, args, options.environment)),
      ownedFolder: ctx.ownedFolder,
    });

    let result: RunOutcome['result'] | null = null;
    let recording: Promise<void> = Promise.resolve();
    const reading = splitLines(child.stdout, LINE_MAX_BYTES, {
      line(line) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return; // Not stream-json (a banner, a warning): not part of the transcript.
        }
        for (const action of mapStreamLine(parsed)) {
          // In order, one at a time: each is a durable write.
          recording = recording.then(async () => {
            if (action.kind === 'assistant')
              await appendWithinCap(ctx.sink, { type: 'assistant', message: { content: action.content } });
            else if (action.kind === 'tasks') await ctx.sink.tasks(action.tasks);
            else result = action.result;
          });
        }
      },
      oversize(bytes) {
        recording = recording.then(() =>
          ctx.sink.assistant(notice(oversizeLineText(bytes, LINE_MAX_BYTES), 'error')),
        );
      },
    }).catch(() => undefined);

    const exit = await child.ended;
    await reading;
    await recording;
    if (ctx.signal.aborted) throw new RunAborted();

    const elapsed = Date.now() - started;
    const tail = exit.stderrTail;
    if (exit.error) {
      const missing = exit.error.code === 'ENOENT';
      return {
        result: resultMessage(
          false,
          missing
            ? `The agent command "${program}" was not found.`
            : `The agent command could not start: ${exit.error.message}`,
          elapsed,
          0,
        ),
      };
    }
    if (exit.timedOut) {
      return {
        result: resultMessage(
          false,
          `The agent did not finish within ${Math.round(options.timeoutMs / 1000)} s and was stopped.${tail ? `\n\n${tail}` : ''}`,
          elapsed,
          0,
        ),
      };
    }
    if (result) return { result };
    if (exit.code === 0)
      return { result: resultMessage(true, 'The agent finished without a result message.', elapsed, 0) };
    return {
      result: resultMessage(
        false,
        `The agent exited with code ${exit.code}.${tail ? `\n\n${tail}` : ''}`,
        elapsed,
        0,
      ),
    };
  }

  return {
    kind: 'command',
    async start(ctx, prompt) {
      const branch = branchName(ctx.session.title, ctx.session.id);
      await prepareSandbox({
        dir: ctx.sandboxDir,
        repoUrl: ctx.session.repoUrl,
        baseBranch: ctx.session.baseBranch,
        branch,
        signal: ctx.signal,
        env: options.environment,
        identity: ctx.session.author,
      });
      if (ctx.session.repoUrl) await ctx.sink.branch(branch);
      return run(ctx, prompt ?? ctx.session.title);
    },
    async followUp(ctx, text) {
      await prepareSandbox({
        dir: ctx.sandboxDir,
        repoUrl: ctx.session.repoUrl,
        baseBranch: ctx.session.baseBranch,
        branch: branchName(ctx.session.title, ctx.session.id),
        env: options.environment,
        identity: ctx.session.author,
      });
      return run(ctx, text);
    },
  };
}
