import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import type {
  CreateTerminalRequest,
  TerminalExitStatus,
  TerminalOutputResponse,
} from '@agentclientprotocol/sdk/unstable';
import { TERMINAL_OUTPUT_MAX_BYTES } from '../../output-caps.js';
import { runProcess, type ProcessRun } from '../../process/process-run.js';
import type { RunContext } from '../../types.js';

/**
 * The terminals Session Desk offers an ACP agent as its client (`terminal/*`). The client runs
 * outside the sandbox, so each command is started in a sandbox of its own with the run's very
 * confinement (what the agent may see and write, its network), working in the session's folder;
 * its output is kept up to a limit, and every terminal ends with the run.
 */

/** How many terminals one run may hold at once (created and not yet released). */
export const MAX_TERMINALS = 16;
/** Released terminals whose output a tool call may still show: the most recent ones. */
const RELEASED_KEPT = 32;

/** A request the client refuses, with the reason the transcript shows. */
export class RefusedTerminalRequest extends Error {}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;
/** Variables that mark a run's processes as the run's: an agent does not set them. */
const OWN_ENV = /^SESSIONDESK_/iu;

/**
 * Sets the request's variables, then runs the command with its errors on its output. The
 * variables go in as arguments, inside the sandbox: never in the environment of bubblewrap
 * itself, which runs outside it (a `LD_PRELOAD` of the agent's would run there).
 */
const LAUNCH = 'n=$1; shift; while [ "$n" -gt 0 ]; do export "$1"; shift; n=$((n - 1)); done; exec "$@" 2>&1';

export interface AcpTerminalsOptions {
  /** The session's folder: the commands work in it, or in a folder inside it. */
  folder: string;
  /** The agent's environment: the terminals' too. */
  env: NodeJS.ProcessEnv;
  confinement: RunContext['confinement'];
  ownedFolder: string | undefined;
  timeoutMs: number;
  /** A terminal no tool call showed, once it is released or the run ends: the transcript shows it. */
  unshown(terminal: TerminalShown): void;
}

/** What the transcript shows of a terminal. */
export interface TerminalShown {
  id: string;
  command: string[];
  cwd: string;
  text: string;
  failed: boolean;
}

interface Terminal {
  id: string;
  command: string[];
  cwd: string;
  limit: number;
  output: Buffer;
  truncated: boolean;
  process: ProcessRun;
  stop: AbortController;
  exit: TerminalExitStatus | undefined;
  exited: Promise<TerminalExitStatus>;
  killed: boolean;
  referenced: boolean;
}

export interface AcpTerminals {
  create(params: CreateTerminalRequest): Promise<{ terminalId: string }>;
  output(terminalId: string): TerminalOutputResponse;
  waitForExit(terminalId: string): Promise<TerminalExitStatus>;
  kill(terminalId: string): Record<string, never>;
  release(terminalId: string): Record<string, never>;
  /** A tool call names the terminal: its result shows the terminal's command and output. */
  referenced(terminalId: string): void;
  /** The terminal's command and output as a tool call's result shows them. */
  text(terminalId: string): string | undefined;
  /** Stops every command at once (the run is being stopped). */
  stopAll(): void;
  /** The run is over: every terminal killed, waited for, released; no new one is made. */
  close(): Promise<void>;
}

/** Drops bytes from the start of `output` down to `limit`, at the start of a character. */
function keepTail(output: Buffer, limit: number): Buffer {
  if (output.length <= limit) return output;
  let cut = output.length - limit;
  while (cut < output.length && ((output[cut] ?? 0) & 0xc0) === 0x80) cut += 1;
  return Buffer.from(output.subarray(cut));
}

/** The output as text; while the command runs, a character still arriving waits for its last bytes. */
function outputText(output: Buffer, running: boolean): string {
  let end = output.length;
  if (running) {
    let lead = end - 1;
    while (lead >= 0 && end - lead < 4 && ((output[lead] ?? 0) & 0xc0) === 0x80) lead -= 1;
    const byte = output[lead] ?? 0;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (lead >= 0 && end - lead < length) end = lead;
  }
  return output.toString('utf8', 0, end);
}

const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;

function exitLine(terminal: Terminal): string {
  const exit = terminal.exit;
  if (terminal.killed) return '[killed]';
  if (!exit) return '[still running]';
  return exit.exitCode === null || exit.exitCode === undefined ? '[ended]' : `[exit code ${exit.exitCode}]`;
}

function shown(terminal: Terminal): TerminalShown {
  const output = outputText(terminal.output, terminal.exit === undefined);
  const text = [
    `$ ${terminal.command.map(shellWord).join(' ')}`,
    ...(terminal.truncated ? ['[earlier output left out]'] : []),
    ...(output === '' ? [] : [output.replace(/\n$/u, '')]),
    exitLine(terminal),
  ].join('\n');
  const failed = terminal.killed || (terminal.exit !== undefined && terminal.exit.exitCode !== 0);
  return { id: terminal.id, command: terminal.command, cwd: terminal.cwd, text, failed };
}

/** The folder a command works in: the session's folder, or a folder inside it. */
async function workingFolder(folder: string, cwd: string | null | undefined): Promise<string> {
  const wanted = cwd ?? folder;
  if (!isAbsolute(wanted)) throw new RefusedTerminalRequest(`${wanted} is not an absolute path`);
  let real: string;
  try {
    real = await realpath(wanted);
    if (!(await stat(real)).isDirectory()) throw new RefusedTerminalRequest(`${wanted} is not a folder`);
  } catch (err) {
    if (err instanceof RefusedTerminalRequest) throw err;
    throw new RefusedTerminalRequest(`${wanted} is not a folder`);
  }
  const rel = relative(await realpath(folder), real);
  if (rel.startsWith('..') || isAbsolute(rel))
    throw new RefusedTerminalRequest(`${wanted} is outside the session's folder`);
  return real;
}

function requestedEnv(params: CreateTerminalRequest): string[] {
  return (params.env ?? []).map(({ name, value }) => {
    if (!ENV_NAME.test(name))
      throw new RefusedTerminalRequest(`${JSON.stringify(name)} is not a variable name`);
    if (OWN_ENV.test(name)) throw new RefusedTerminalRequest(`${name} is Session Desk's own variable`);
    if (value.includes('\0')) throw new RefusedTerminalRequest(`the value of ${name} holds a NUL character`);
    return `${name}=${value}`;
  });
}

export function createAcpTerminals(options: AcpTerminalsOptions): AcpTerminals {
  const live = new Map<string, Terminal>();
  const released = new Map<string, Terminal>();
  /** Every command not yet ended, released ones included: the run waits for them all. */
  const running = new Set<Promise<unknown>>();
  let closed = false;

  function find(terminalId: string): Terminal {
    const terminal = live.get(terminalId);
    if (!terminal) throw new RefusedTerminalRequest(`there is no terminal ${terminalId}`);
    return terminal;
  }

  function stopCommand(terminal: Terminal): void {
    if (terminal.exit === undefined) terminal.killed = true;
    terminal.stop.abort();
  }

  function forget(terminal: Terminal): void {
    live.delete(terminal.id);
    if (!terminal.referenced) {
      options.unshown(shown(terminal));
      return;
    }
    released.set(terminal.id, terminal);
    for (const old of released.keys()) {
      if (released.size <= RELEASED_KEPT) break;
      released.delete(old);
    }
  }

  return {
    async create(params) {
      if (closed) throw new RefusedTerminalRequest('the run is over');
      if (live.size >= MAX_TERMINALS)
        throw new RefusedTerminalRequest(
          `the run holds ${MAX_TERMINALS} terminals already: release one before creating another`,
        );
      const command = [params.command, ...(params.args ?? [])];
      if (params.command === '' || command.some((word) => word.includes('\0')))
        throw new RefusedTerminalRequest('the command is empty or holds a NUL character');
      const env = requestedEnv(params);
      const cwd = await workingFolder(options.folder, params.cwd);
      if (closed) throw new RefusedTerminalRequest('the run is over');
      const limit = Math.min(
        typeof params.outputByteLimit === 'number' && params.outputByteLimit >= 0
          ? Math.floor(params.outputByteLimit)
          : TERMINAL_OUTPUT_MAX_BYTES,
        TERMINAL_OUTPUT_MAX_BYTES,
      );
      const stop = new AbortController();
      const child = runProcess({
        program: '/bin/sh',
        args: ['-c', LAUNCH, 'sh', String(env.length), ...env, ...command],
        cwd,
        env: options.env,
        stdin: '',
        timeoutMs: options.timeoutMs,
        signal: stop.signal,
        confine: options.confinement,
        ownedFolder: options.ownedFolder,
      });
      const terminal: Terminal = {
        id: `terminal-${randomUUID()}`,
        command,
        cwd,
        limit,
        output: Buffer.alloc(0),
        truncated: false,
        process: child,
        stop,
        exit: undefined,
        exited: child.ended.then((end) => {
          terminal.exit = {
            exitCode: end.code,
            signal: terminal.killed || end.timedOut ? 'SIGTERM' : null,
          };
          return terminal.exit;
        }),
        killed: false,
        referenced: false,
      };
      child.stdout.on('data', (chunk: Buffer) => {
        const kept = keepTail(Buffer.concat([terminal.output, chunk]), terminal.limit);
        if (kept.length < terminal.output.length + chunk.length) terminal.truncated = true;
        terminal.output = kept;
      });
      live.set(terminal.id, terminal);
      running.add(terminal.exited);
      void terminal.exited.then(() => running.delete(terminal.exited));
      return { terminalId: terminal.id };
    },

    output(terminalId) {
      const terminal = find(terminalId);
      return {
        output: outputText(terminal.output, terminal.exit === undefined),
        truncated: terminal.truncated,
        exitStatus: terminal.exit ?? null,
      };
    },

    waitForExit(terminalId) {
      return find(terminalId).exited;
    },

    kill(terminalId) {
      stopCommand(find(terminalId));
      return {};
    },

    release(terminalId) {
      const terminal = find(terminalId);
      stopCommand(terminal);
      forget(terminal);
      return {};
    },

    referenced(terminalId) {
      const terminal = live.get(terminalId) ?? released.get(terminalId);
      if (terminal) terminal.referenced = true;
    },

    text(terminalId) {
      const terminal = live.get(terminalId) ?? released.get(terminalId);
      return terminal ? shown(terminal).text : undefined;
    },

    stopAll() {
      for (const terminal of live.values()) stopCommand(terminal);
    },

    async close() {
      closed = true;
      const ending = [...live.values()];
      for (const terminal of ending) stopCommand(terminal);
      await Promise.all([...running]);
      for (const terminal of ending) if (live.has(terminal.id)) forget(terminal);
    },
  };
}
