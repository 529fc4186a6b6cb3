import type { Approval } from '../../src-shared/approvals.js';
import type { AgentKind } from '../../src-shared/constants.js';
import type { Usage } from '../../src-shared/sessions.js';
import type { ApprovalRecord } from './approvals.js';
import { costIsUnknown } from './cost-unknown.js';

/*
 * A session's agent fields as an export holds them, and how either database's
 * `sessions.setAgentFields` writes them back; touches no database.
 */

/** One run that reported usage, as an export holds it. */
export interface ExportedRun {
  kind: AgentKind;
  conversationId?: string | undefined;
  endedAt: string;
  usage: Usage;
}

/**
 * What the agents record about a session beyond its messages (export schema version 6): the
 * CLI's conversation a follow-up resumes, each run's usage, the usage summed over them, and
 * what its agents asked before acting. An import or a push sets them as the export had them,
 * not by replaying the runs, so the totals come out exactly as exported.
 */
export interface AgentFields {
  agent?: AgentKind | undefined;
  usage?: Usage | undefined;
  conversation?: { kind: AgentKind; id: string } | undefined;
  /** In the order they ended. */
  runs?: ExportedRun[] | undefined;
  approvals?: Array<Omit<Approval, 'sessionId'>> | undefined;
}

/**
 * The approvals that `setAgentFields` saves for a session: a request still pending in the
 * export is expired, since no run of this installation waits on it.
 */
export function agentFieldApprovals(
  sessionId: string,
  workspaceId: string,
  fields: AgentFields,
): ApprovalRecord[] {
  return (fields.approvals ?? []).map((approval) => {
    const settled =
      approval.decidedAt === undefined
        ? {
            decidedAt: approval.expiresAt,
            decision: 'expired' as const,
            decidedBy: { kind: 'sessiondesk' as const, reason: 'imported' as const },
          }
        : {};
    return { ...approval, ...settled, sessionId, workspaceId };
  });
}

/** The row of a run an export holds: its model is the one its unknown cost names. */
export function agentFieldRun(run: ExportedRun): ExportedRun & { model: string | undefined } {
  return { ...run, model: run.usage.costUnknown?.models[0] };
}

/** A run's row of `agent_runs` as either database reads it. */
export interface RunRow {
  kind: string;
  conversationId: string | null;
  endedAt: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
  unpricedModel: string | null;
}

/**
 * A run as an export holds it: its cost unknown when nothing priced its tokens. Both databases'
 * `sessions.runs` list a session's runs in one order, so both export a session byte for byte
 * alike: the order they ended, and runs that ended at the same instant by what they hold
 * (PostgreSQL keeps no order of insertion; two runs equal in every column are interchangeable),
 * text compared as bytes (SQLite's BINARY, PostgreSQL's "C") and an absent value first.
 */
export function exportedRun(row: RunRow): ExportedRun {
  const usage: Usage = {
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    cacheReadTokens: row.cacheReadTokens,
    cacheWriteTokens: row.cacheWriteTokens,
  };
  if (row.costUsd !== null) usage.costUsd = row.costUsd;
  const kind = row.kind as AgentKind;
  if (costIsUnknown({ kind, usage }))
    usage.costUnknown = { runs: 1, models: row.unpricedModel === null ? [] : [row.unpricedModel] };
  return {
    kind,
    ...(row.conversationId === null ? {} : { conversationId: row.conversationId }),
    endedAt: row.endedAt,
    usage,
  };
}
