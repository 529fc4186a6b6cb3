import type { ApprovalDecidedBy, DecideApprovalBody } from '../../../src-shared/approvals.js';
import type { ErrorCode } from '../../../src-shared/errors.js';
import type { ReviewBody } from '../../../src-shared/review.js';
import type { FollowUpBody, SessionStatus } from '../../../src-shared/sessions.js';
import type { Logger } from '../../clock.js';
import { AppError, conflict, type ErrorDetail } from '../../errors.js';
import type { AgentState } from '../../store/session-runs.js';
import type { RunLeases } from './leases.js';

/**
 * What people ask of a session's run that only the process running it can do, once the
 * process they asked has checked that they may: the same whichever process runs it.
 */
export type RunRequest =
  | { kind: 'stop'; sessionId: string; stoppedBy: string }
  /** A change of title and status; a final status stops the run. */
  | { kind: 'update'; sessionId: string; changes: { title?: string; status?: SessionStatus } }
  | { kind: 'follow-up'; sessionId: string; body: FollowUpBody; authorId: string }
  /** Comments on lines of the session's changes: checked there, against its sandbox. */
  | { kind: 'review'; sessionId: string; body: ReviewBody; authorId: string }
  | {
      kind: 'decide';
      sessionId: string;
      approvalId: string;
      body: DecideApprovalBody;
      by: ApprovalDecidedBy;
    };

/** How a request sent to the process holding a session's lease went. */
export type Delivery =
  | { kind: 'answered'; answer: unknown }
  /** No process holds the lease, or the one that did no longer does. */
  | { kind: 'not-held' }
  /** It did not take the request in time, or took it and did not answer in time (`ms`). */
  | { kind: 'no-answer'; taken: boolean; ms: number }
  /** It stopped before it answered. */
  | { kind: 'gone' };

/**
 * The way from one server process to the one holding a session's lease, on a team database
 * (store-postgres/run-requests.ts); the desktop, one process, has none.
 */
export interface RunRequests {
  send(sessionId: string, request: unknown): Promise<Delivery>;
  /** How this process answers the requests others send it. */
  answer(answer: (sessionId: string, request: unknown) => Promise<unknown>): void;
}

/** What the process running the agent answered: a value, a refusal as the caller gets it, or a failure. */
type Answer =
  | { value: unknown }
  | {
      refused: {
        status: number;
        code: ErrorCode;
        message: string;
        details?: ErrorDetail[];
        headers?: Record<string, string>;
      };
    }
  | { failed: true };

/** Sent again at most this often when the process asked no longer held the lease. */
const ATTEMPTS = 3;

/** What `atRun` needs of the agent host. */
export interface AtRunDeps {
  isActive(sessionId: string): boolean;
  leases: RunLeases;
  /** Lets go of a lease taken here, once nothing of the session runs here. */
  letGo(sessionId: string): void;
  requests?: RunRequests | undefined;
  /** The agent state the database holds for the session. */
  agentState(sessionId: string): Promise<AgentState | null>;
}

const unavailable = (message: string, retryAfterSeconds: number) =>
  new AppError(503, 'unavailable', message, undefined, { 'retry-after': String(retryAfterSeconds) });

/**
 * Does `here` where the session's run is: in this process when it runs it, or when no process
 * does (its lease taken meanwhile); else the process running it is sent `request`, does it as
 * `here` would there, and what it answered is answered here (its refusals included).
 */
export async function atRun<T>(deps: AtRunDeps, request: RunRequest, here: () => Promise<T>): Promise<T> {
  const { sessionId } = request;
  const { leases, requests } = deps;
  const takenOverWithin = Math.ceil((leases.quietForMs + (leases.sweepEveryMs ?? 0)) / 1000);
  const stopped = () =>
    unavailable(
      `The server process that ran this session's agent has stopped; another server process takes its run over within about ${takenOverWithin} seconds: try again then.`,
      takenOverWithin,
    );
  for (let attempt = 1; ; attempt += 1) {
    if (deps.isActive(sessionId)) return here();
    const taken = await leases.take(sessionId);
    if (taken !== 'refused') {
      try {
        // On a team database, a run the database says is going, and no process holds, is one
        // whose process died: it is recovered first (crashed-runs.ts), by the next sweep.
        if (taken === 'acquired' && requests && !deps.isActive(sessionId)) {
          const state = await deps.agentState(sessionId);
          if (state === 'running' || state === 'queued') throw stopped();
        }
        return await here();
      } finally {
        if (taken === 'acquired') deps.letGo(sessionId);
      }
    }
    if (!requests) {
      throw conflict(
        "This session's agent is running on another server process of this team database; try again once it is done.",
      );
    }
    const delivery = await requests.send(sessionId, request);
    if (delivery.kind === 'answered') return unwrap(delivery.answer) as T;
    if (delivery.kind === 'no-answer') {
      const seconds = Math.round(delivery.ms / 1000);
      throw unavailable(
        delivery.taken
          ? `The server process running this session's agent took the request but did not answer within ${seconds} seconds; look at the session before you try again.`
          : `The server process running this session's agent did not answer within ${seconds} seconds; try again in a moment.`,
        5,
      );
    }
    // The lease changed hands meanwhile, or its process stopped: asked again, of whoever holds
    // it now (none: this process, which finds the run left behind).
    if (attempt >= ATTEMPTS) {
      throw unavailable(
        "This session's run changed hands between server processes as it was asked; try again in a moment.",
        1,
      );
    }
  }
}

/**
 * Answers requests other processes send this one with `perform`, which does them as the
 * process running the session's agent does (its refusals sent back as they are).
 */
export function answerRunRequests(
  requests: RunRequests,
  perform: (request: RunRequest) => Promise<unknown>,
  logger: Logger,
): void {
  requests.answer(async (sessionId, sent): Promise<Answer> => {
    const request = sent as RunRequest;
    try {
      // A request names its session twice: the lease it was sent for is the one it acts on.
      if (request.sessionId !== sessionId) throw new Error('the request names another session');
      const value = (await perform(request)) ?? null;
      logger.debug?.(`did a ${String(request.kind)} of ${sessionId}'s run for another server process`, {
        event: 'run-request.answered',
        kind: request.kind,
        sessionId,
      });
      return { value };
    } catch (err) {
      if (err instanceof AppError) {
        const { status, code, message, details, headers } = err;
        return {
          refused: {
            status,
            code,
            message,
            ...(details ? { details } : {}),
            ...(headers ? { headers } : {}),
          },
        };
      }
      logger.error(
        `A request (${String(request.kind)}) about the run of ${sessionId} from another server process failed: ${String(err)}`,
        { event: 'run-request.failed', sessionId, stack: err instanceof Error ? err.stack : undefined },
      );
      return { failed: true };
    }
  });
}

/** The value the other process answered, or its refusal thrown as it threw it. */
function unwrap(answer: unknown): unknown {
  const sent = (answer ?? {}) as Partial<Record<'value' | 'refused', unknown>>;
  if ('value' in sent) return sent.value;
  if (sent.refused && typeof sent.refused === 'object') {
    const { status, code, message, details, headers } = sent.refused as Extract<
      Answer,
      { refused: unknown }
    >['refused'];
    throw new AppError(status, code, message, details, headers);
  }
  throw new Error('The server process running the agent failed on a request sent to it: its log says why.');
}
