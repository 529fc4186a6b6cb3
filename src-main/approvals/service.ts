import {
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  type Approval,
  type ApprovalDecidedBy,
  type ApprovalKind,
  type DecideApprovalBody,
} from '../../src-shared/approvals.js';
import type { ApprovalRulesPreview, ApprovalRulesPreviewBody } from '../../src-shared/accounts.js';
import type { Message } from '../../src-shared/sessions.js';
import { newId } from '../accounts/secrets.js';
import type { ApprovalAnswer, ApprovalRequest } from '../agents/types.js';
import type { Clock, Logger } from '../clock.js';
import { badRequest, conflict, notFound, type AppError } from '../errors.js';
import type { EventBus } from '../events/event-bus.js';
import { toSummary } from '../sessions/summary.js';
import type { ApprovalOutcome, ApprovalRecord } from '../store/approvals.js';
import type { Storage } from '../store/storage.js';
import { notice } from '../agents/output-caps.js';
import { ruleWords } from '../../src-shared/approval-rules.js';
import { APPROVAL_LIMITS, boundedRequest } from './bounds.js';
import {
  compileRules,
  firstMatch,
  modeDecision,
  previewRules,
  PREVIEW_REQUESTS,
  withSubject,
  type CompiledRule,
} from './rules.js';
import { decisionMessage, requestMessage } from './transcript.js';

/** Why Session Desk answered a request itself, when no one did. */
export type EndReason = Extract<ApprovalDecidedBy, { kind: 'sessiondesk' }>['reason'];

/** The requests of one run: asked through `ask`, all answered as cancelled by `end`. */
export interface RunApprovals {
  /** Whether a request no rule decides waits for a person (`approvals: "ask"`), or is allowed. */
  readonly asksByDefault: boolean;
  ask(request: ApprovalRequest): Promise<ApprovalAnswer>;
  end(reason: EndReason): Promise<void>;
}

interface Waiting {
  record: ApprovalRecord;
  answer: (answer: ApprovalAnswer) => void;
  timer: NodeJS.Timeout;
  run: object;
}

/** The public form of a stored request (its workspace is the caller's already). */
export function publicApproval(record: ApprovalRecord): Approval {
  const { workspaceId: _workspace, ...approval } = record;
  return approval;
}

/**
 * What agents ask before they act: each request written with its transcript message in one
 * write, then told live; answered once, by a person, by the time-out, or by the end of its run.
 * The agent's run waits on the answer in memory; a server that stops answers them as cancelled,
 * and one that starts finds those of runs that died with it and marks them expired.
 */
export function createApprovals(deps: { storage: Storage; clock: Clock; events: EventBus; logger: Logger }) {
  const { storage, clock, events, logger } = deps;
  const { repos } = storage;
  const waiting = new Map<string, Waiting>();
  const now = () => clock.now().toISOString();

  /**
   * Tells what was written: the transcript message (at `seq`), the request's event, and the
   * session, whose agentState follows its pending requests.
   */
  async function announce(
    type: 'approval.created' | 'approval.decided',
    approval: ApprovalRecord,
    seq: number,
    message: Message,
  ): Promise<void> {
    const { workspaceId, sessionId } = approval;
    events.publish(workspaceId, { type: 'message.added', sessionId, index: seq - 1, message });
    events.publish(workspaceId, { type, sessionId, approval: publicApproval(approval) });
    const row = await repos.sessions.find(sessionId);
    if (row)
      events.publish(workspaceId, { type: 'session.updated', sessionId, session: toSummary(row, 'both') });
  }

  /** Writes the decision with its transcript message; null when it was decided already. */
  async function record(
    approval: ApprovalRecord,
    outcome: Omit<ApprovalOutcome, 'decidedAt'>,
  ): Promise<ApprovalRecord | null> {
    const decided = await storage.write(async (tx) => {
      const full: ApprovalOutcome = { ...outcome, decidedAt: now() };
      if (!(await tx.approvals.decide(approval.id, approval.sessionId, full))) return null;
      const updated = (await tx.approvals.find(approval.id)) as ApprovalRecord;
      const message = decisionMessage(updated);
      const seq = await tx.sessions.appendMessage(
        approval.sessionId,
        approval.workspaceId,
        message,
        null,
        now(),
      );
      return { updated, message, seq };
    });
    if (!decided) return null;
    const { updated, message, seq } = decided;
    await announce('approval.decided', updated, seq, message);
    return updated;
  }

  /** Decides a waiting request and lets its run go on with the answer. */
  async function settle(
    entry: Waiting,
    outcome: Omit<ApprovalOutcome, 'decidedAt'>,
  ): Promise<ApprovalRecord | null> {
    const decided = await record(entry.record, outcome);
    if (!decided) return null;
    clearTimeout(entry.timer);
    waiting.delete(entry.record.id);
    entry.answer({
      decision: outcome.decision,
      ...(outcome.optionId === undefined ? {} : { optionId: outcome.optionId }),
      ...(outcome.message === undefined ? {} : { message: outcome.message }),
    });
    return decided;
  }

  /** The first option of a kind; a rejection falls back on the other rejection. */
  function optionOf(approval: Pick<ApprovalRecord, 'options'>, kind: ApprovalKind) {
    const found = approval.options.find((o) => o.kind === kind);
    if (found || !kind.startsWith('reject_')) return found;
    return approval.options.find((o) => o.kind.startsWith('reject_'));
  }

  /**
   * Allowing without a person: once where the agent offers it (for the session only where it
   * offers nothing else, since an agent told "always" stops asking, and rules with it).
   */
  function allowed(request: ApprovalRequest): ApprovalAnswer {
    const option = optionOf(request, 'allow_once') ?? optionOf(request, 'allow_always');
    return { decision: option?.kind ?? 'allow_once', ...(option ? { optionId: option.id } : {}) };
  }

  /**
   * A request a rule decided: written decided, its transcript messages (the request and what
   * became of it) in the same write, and never put to anyone: no pending row, no notification.
   */
  async function decideByRule(
    session: { id: string; workspaceId: string },
    agent: string,
    request: ApprovalRequest,
    match: CompiledRule,
  ): Promise<ApprovalAnswer> {
    const { rule, index } = match;
    const answer: ApprovalAnswer =
      rule.decision === 'allow'
        ? allowed(request)
        : (() => {
            const reject = optionOf(request, 'reject_once');
            return {
              decision: reject?.kind ?? 'reject_once',
              ...(reject ? { optionId: reject.id } : {}),
              message: `This workspace's approval rules reject this request (rule ${index + 1}: ${ruleWords(rule)}).`,
            };
          })();
    const at = now();
    const approval: ApprovalRecord = {
      id: newId('approval'),
      workspaceId: session.workspaceId,
      sessionId: session.id,
      agent,
      createdAt: at,
      expiresAt: at,
      title: request.title,
      tool: request.tool,
      ...(request.detail.trim() === '' ? {} : { detail: request.detail }),
      options: request.options,
      decidedAt: at,
      decision: answer.decision,
      ...(answer.optionId === undefined ? {} : { optionId: answer.optionId }),
      ...(answer.message === undefined ? {} : { message: answer.message }),
      decidedBy: { kind: 'rule', index, rule },
    };
    const asked = requestMessage(publicApproval(approval));
    const told = decisionMessage(publicApproval(approval));
    // The session's row locked (by the append) before the approval refers to it: see ask().
    const seq = await storage.write(async (tx) => {
      await tx.sessions.appendMessage(session.id, session.workspaceId, asked, null, at);
      await tx.approvals.save(approval);
      return tx.sessions.appendMessage(session.id, session.workspaceId, told, null, at);
    });
    events.publish(session.workspaceId, {
      type: 'message.added',
      sessionId: session.id,
      index: seq - 2,
      message: asked,
    });
    await announce('approval.decided', approval, seq, told);
    return answer;
  }

  function timeOut(entry: Waiting): void {
    const reject = optionOf(entry.record, 'reject_once');
    void settle(entry, {
      decision: reject?.kind ?? 'reject_once',
      decidedBy: { kind: 'sessiondesk', reason: 'timeout' },
      ...(reject ? { optionId: reject.id } : {}),
      message: 'No one decided in time: the request was rejected.',
    }).catch((err: unknown) =>
      logger.error(`Could not record that request ${entry.record.id} timed out: ${String(err)}`),
    );
  }

  return {
    /**
     * The requests of one run of a session, or none when its workspace neither asks nor has
     * approval rules: `agent` names who asks (`claude-code`, `acp:gemini`), `folder` is where
     * the run works (the paths rules match are relative to it).
     */
    async forRun(
      session: { id: string; workspaceId: string },
      agent: string,
      folder: string,
    ): Promise<RunApprovals | undefined> {
      const settings = await repos.workspaces.settings(session.workspaceId);
      // The rules as they are when the run starts: an edit applies to runs started afterwards.
      const rules = compileRules(settings?.approvalRules ?? []);
      if (!settings || (settings.approvals !== 'ask' && rules.length === 0)) return undefined;
      const byDefault = modeDecision(settings.approvals);
      const timeoutMs = (settings.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS) * 1000;
      const run = {};
      let ended = false;
      let saidTooMany = false;
      /**
       * An agent asking more than a person can answer at once (a loop, a flood) has its next
       * requests rejected as they come, never stored: the inbox stays readable, and each such
       * request holds up nothing. The transcript says so once a run.
       */
      async function refuseTooMany(request: ApprovalRequest): Promise<ApprovalAnswer> {
        if (!saidTooMany) {
          saidTooMany = true;
          const text =
            `The agent asked more than ${APPROVAL_LIMITS.pendingPerRun} things waiting at once: ` +
            'Session Desk rejected its further requests as they came, without putting them to anyone, ' +
            'until some of those waiting are decided.';
          const message = notice(text, 'error');
          const seq = await storage.write((tx) =>
            tx.sessions.appendMessage(session.id, session.workspaceId, message, null, now()),
          );
          events.publish(session.workspaceId, {
            type: 'message.added',
            sessionId: session.id,
            index: seq - 1,
            message,
          });
        }
        const reject = request.options.find((o) => o.kind.startsWith('reject_'));
        return {
          decision: reject?.kind ?? 'reject_once',
          ...(reject ? { optionId: reject.id } : {}),
          message: `Not asked: ${APPROVAL_LIMITS.pendingPerRun} of your requests are waiting for a person already.`,
        };
      }
      return {
        asksByDefault: byDefault === 'ask',
        async ask(asked) {
          if (ended) return { decision: 'cancelled' };
          const bounded = boundedRequest(asked);
          const request = { ...bounded, tool: withSubject(bounded.tool, asked.subject ?? {}, folder) };
          const match = firstMatch(rules, request.tool);
          const decision = match?.rule.decision ?? byDefault;
          if (decision === 'allow' && !match) return allowed(request);
          if (match && decision !== 'ask') return decideByRule(session, agent, request, match);
          const mine = [...waiting.values()].filter((entry) => entry.run === run).length;
          if (mine >= APPROVAL_LIMITS.pendingPerRun) return refuseTooMany(request);
          const created = clock.now();
          const approval: ApprovalRecord = {
            id: newId('approval'),
            workspaceId: session.workspaceId,
            sessionId: session.id,
            agent,
            createdAt: created.toISOString(),
            expiresAt: new Date(created.getTime() + timeoutMs).toISOString(),
            title: request.title,
            tool: request.tool,
            ...(request.detail.trim() === '' ? {} : { detail: request.detail }),
            options: request.options,
          };
          const message = requestMessage(publicApproval(approval));
          // Waiting before it is written: a reader sees it in the database as soon as it is
          // written there, and may decide it before the write is durable.
          const answered = new Promise<ApprovalAnswer>((resolve) => {
            const entry: Waiting = {
              record: approval,
              answer: resolve,
              run,
              timer: setTimeout(() => timeOut(entry), timeoutMs),
            };
            waiting.set(approval.id, entry);
          });
          let seq: number;
          try {
            // The message first: its append locks the session's row, which the approval's
            // reference to the session would otherwise share first. On PostgreSQL two requests
            // of one run written at once, each holding that share and waiting for the other's
            // lock, deadlocked, and the agent heard an internal error.
            seq = await storage.write(async (tx) => {
              const appended = await tx.sessions.appendMessage(
                session.id,
                session.workspaceId,
                message,
                null,
                now(),
              );
              await tx.approvals.save(approval);
              return appended;
            });
          } catch (err) {
            clearTimeout(waiting.get(approval.id)?.timer);
            waiting.delete(approval.id);
            throw err;
          }
          await announce('approval.created', approval, seq, message);
          return answered;
        },
        async end(reason) {
          ended = true;
          const mine = [...waiting.values()].filter((entry) => entry.run === run);
          for (const entry of mine) {
            await settle(entry, { decision: 'cancelled', decidedBy: { kind: 'sessiondesk', reason } });
          }
        },
      };
    },

    /**
     * What draft rules would have decided of the workspace's latest requests; `approvals` is
     * the workspace's own setting unless given.
     */
    async preview(workspaceId: string, body: ApprovalRulesPreviewBody): Promise<ApprovalRulesPreview> {
      const mode = body.approvals ?? (await repos.workspaces.settings(workspaceId))?.approvals;
      const recent = await repos.approvals.recent(workspaceId, PREVIEW_REQUESTS);
      return previewRules(body.approvalRules, mode, recent);
    },

    /** Pending requests of a workspace (or of one session), oldest first. */
    async pending(workspaceId: string, sessionId?: string): Promise<Approval[]> {
      return (await repos.approvals.pending(workspaceId, sessionId)).map(publicApproval);
    },

    /** A request by id (404 when there is none), with its workspace for the access check. */
    async find(id: string): Promise<ApprovalRecord> {
      const found = await repos.approvals.find(id);
      if (!found) throw notFound('There is no such request');
      return found;
    },

    /**
     * A person's (or an allowed key's) decision: by option, or by kind. 409 when the request
     * was decided already; 400 when the option is not one of the request's.
     */
    async decide(
      approval: ApprovalRecord,
      body: DecideApprovalBody,
      by: ApprovalDecidedBy,
    ): Promise<Approval> {
      if (approval.decidedAt !== undefined) throw decidedAlready(approval);
      let option: ApprovalRecord['options'][number] | undefined;
      if (body.optionId !== undefined) {
        option = approval.options.find((o) => o.id === body.optionId);
        if (!option) {
          throw badRequest(`"${body.optionId}" is not one of this request's options`, [
            {
              path: 'body.optionId',
              message: `must be one of ${approval.options.map((o) => o.id).join(', ')}`,
            },
          ]);
        }
      } else {
        const kind = body.decision as ApprovalKind;
        option = optionOf(approval, kind);
        if (!option && !kind.startsWith('reject_')) {
          throw badRequest(`This request offers no "${kind}" choice`, [
            {
              path: 'body.decision',
              message: `must be one of ${[...new Set(approval.options.map((o) => o.kind))].join(', ')}`,
            },
          ]);
        }
      }
      const decision = option?.kind ?? (body.decision as ApprovalKind);
      if (body.message !== undefined && !decision.startsWith('reject_')) {
        throw badRequest('A message goes with a rejection only', [
          { path: 'body.message', message: 'is only for reject_once or reject_always' },
        ]);
      }
      const outcome = {
        decision,
        decidedBy: by,
        ...(option ? { optionId: option.id } : {}),
        ...(body.message === undefined ? {} : { message: body.message }),
      };
      const entry = waiting.get(approval.id);
      const decided = entry ? await settle(entry, outcome) : null;
      if (!decided) throw decidedAlready((await repos.approvals.find(approval.id)) ?? approval);
      return publicApproval(decided);
    },

    /**
     * At start: requests still pending belong to runs that died with the last server; they
     * are marked expired, saying so in their transcripts. Returns how many.
     */
    /**
     * Expires the requests no run waits on any more: after a restart, every pending one; on a
     * team database, those of the sessions whose runs this process recovered (`sessionIds`).
     */
    async expireAbandoned(sessionIds?: readonly string[]): Promise<number> {
      const only = sessionIds && new Set(sessionIds);
      const abandoned = (await repos.approvals.allPending()).filter((a) => !only || only.has(a.sessionId));
      for (const approval of abandoned) {
        await record(approval, {
          decision: 'expired',
          decidedBy: { kind: 'sessiondesk', reason: 'server-restarted' },
        });
      }
      return abandoned.length;
    },
  };
}
export type Approvals = ReturnType<typeof createApprovals>;

function decidedAlready(approval: ApprovalRecord): AppError {
  return conflict(
    approval.decision === undefined
      ? 'This request can no longer be decided: its run has ended'
      : `This request was decided already (${approval.decision}, at ${approval.decidedAt})`,
  );
}
