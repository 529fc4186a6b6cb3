import type { ApprovalDecision, ApprovalOption, ApprovalTool } from '../../src-shared/approvals.js';
import type { AgentKind } from '../../src-shared/constants.js';
import type { AssistantMessage, ResultMessage, Task } from '../../src-shared/sessions.js';

/** Where a run's proxy is reached: its socket (same path in and out), the port inside, Node.js. */
export interface NetworkBridge {
  socket: string;
  port: number;
  /** The Node.js program that runs the bridge (found on the agent's PATH). */
  node: string;
}

/** What a run may see and write, besides the system's own programs and libraries. */
export interface Confinement {
  /**
   * Folders the run writes in: the session's sandbox (or the folder a person chose) and the
   * session's home for its CLIs' state (never the person's own CLI folders).
   */
  writable: string[];
  /** Files and folders it reads: the agent's program and what it needs to run. */
  readable: string[];
  /**
   * Single files of the person's it writes, bound at another place (`to`, in the session's CLI
   * home): an imported conversation's file, which the CLI resumes and appends to.
   */
  files?: { from: string; to: string }[];
  /** Folders that must never be visible, even where a readable folder holds them. */
  hidden: string[];
  /**
   * The workspace limits the network: the run gets none of its own, and reaches the allowed
   * hosts only through the proxy's socket, by way of a bridge that runs the program.
   */
  network?: NetworkBridge;
}

export type OsSandbox =
  | {
      isolation: 'sandbox';
      bwrap: string;
      wrap(
        program: string,
        args: string[],
        confinement: Confinement,
        env: NodeJS.ProcessEnv,
        cwd: string,
      ): { program: string; args: string[] };
    }
  | { isolation: 'none'; reason: string };

/** What a runner may do to its session: every call is a durable write and a live event. */
export interface SessionSink {
  assistant(message: AssistantMessage): Promise<void>;
  tasks(tasks: Task[]): Promise<void>;
  branch(name: string): Promise<void>;
}

export interface AgentSession {
  id: string;
  workspaceId: string;
  title: string;
  model: string;
  repoUrl?: string;
  repository?: string;
  baseBranch: string;
  /** The person who started the session: the sandbox's commits are theirs. */
  author?: { name: string; email: string };
}

export interface RunContext {
  session: AgentSession;
  /** The session's own folder under the data directory (the clone, for the command agent). */
  sandboxDir: string;
  sink: SessionSink;
  /** Aborted when the session is stopped (a PATCH to completed or failed, or shutdown). */
  signal: AbortSignal;
  /** Told the process group of the program a run starts, so that a later start can end it. */
  processStarted?: (pgid: number) => void;
  /**
   * The operating-system sandbox a run's program goes in, and what it may see: the session's
   * folder writable, the data directory and the other sessions' folders hidden. A runner adds
   * its program's own folders (its install, its CLI's state) before it starts the program.
   */
  confinement?: { sandbox: OsSandbox; rules: Confinement };
  /**
   * The session's own folder, when the run works in it (not in a person's folder): a process
   * still working there when the run ends is the run's, and is ended with it.
   */
  ownedFolder?: string;
  /**
   * The session's home for its agent CLIs' state (see cli-homes.ts), writable in its runs:
   * never the person's own `~/.claude`, `~/.codex` or `~/.gemini`.
   */
  cliHome?: string;
  /**
   * Set when the workspace's approvals are `ask` or it has approval rules: what the agent asks
   * before it acts is decided by a rule, or waits for a person's decision (or the time-out, or
   * the run's end), or is allowed as `auto` allows it. Unset, every tool call is allowed inside
   * the sandbox.
   */
  askApproval?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
}

/** What an agent asks before it acts, as a runner describes it. */
export interface ApprovalRequest {
  title: string;
  tool: ApprovalTool;
  /** The agent's own choices (a runner makes them up where its agent has none to offer). */
  options: ApprovalOption[];
  /** What the transcript shows of it, in full: the command, or the diff of the edit. */
  detail: string;
  /**
   * What the call would act on, as the agent said it: approval rules match it
   * (approvals/rules.ts). Paths as the agent gave them, absolute or relative to the run's folder.
   */
  subject?: ApprovalSubject;
}

/** What a tool call would act on, as its agent said: what approval rules match. */
export interface ApprovalSubject {
  command?: string;
  paths?: string[];
  url?: string;
}

/** How a request was answered; `optionId` is one of the request's options when one was chosen. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  optionId?: string;
  /** With a rejection: what to tell the agent. */
  message?: string;
}

/** The confinement with more folders readable, and files of the person's bound in. */
export function withFolders(
  confinement: RunContext['confinement'],
  more: { readable?: string[]; files?: Confinement['files'] },
): RunContext['confinement'] {
  if (!confinement) return undefined;
  const { rules } = confinement;
  return {
    sandbox: confinement.sandbox,
    rules: {
      ...rules,
      readable: [...rules.readable, ...(more.readable ?? [])],
      files: [...(rules.files ?? []), ...(more.files ?? [])],
    },
  };
}

/** How a run ended: the result message; `failed` decides the session's status. */
export interface RunOutcome {
  result: ResultMessage;
}

/**
 * An agent. `start` works on the session's first prompt, `followUp` on a later one; both
 * resolve when the agent is done with that prompt. Stopping is the signal in the context.
 */
export interface AgentRunner {
  readonly kind: AgentKind;
  /** With kind `acp`: which ACP agent it runs. */
  readonly acpAgent?: string;
  /** Whether its agent puts what it asks before acting to Session Desk (`askApproval`). */
  readonly asksApproval?: boolean;
  start(ctx: RunContext, prompt: string | undefined): Promise<RunOutcome>;
  followUp(ctx: RunContext, text: string): Promise<RunOutcome>;
}

export class RunAborted extends Error {
  /** What the run used until it was stopped, when its agent reported it. */
  constructor(readonly usage?: ResultMessage['usage']) {
    super('the run was stopped');
  }
}

/** Waits `ms`, or throws RunAborted as soon as the run is stopped. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new RunAborted());
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RunAborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function resultMessage(
  success: boolean,
  text: string,
  durationMs: number,
  turns: number,
): ResultMessage {
  return {
    type: 'result',
    subtype: success ? 'success' : 'error',
    is_error: !success,
    result: text,
    duration_ms: Math.round(durationMs),
    num_turns: turns,
  };
}

/** `agent/<short-title>`: the working branch an agent creates for a session. */
export function branchName(title: string, sessionId: string): string {
  const slug = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/gu, '-')
    .replace(/^-+|-+$/gu, '')
    .split('-')
    .slice(0, 6)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/u, '');
  return `agent/${slug || 'session'}-${sessionId
    .slice(-6)
    .toLowerCase()
    .replace(/[^a-z0-9]/gu, 'x')}`;
}
