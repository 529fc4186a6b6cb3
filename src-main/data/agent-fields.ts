import type { AgentKind } from '../../src-shared/constants.js';
import type { Usage } from '../../src-shared/sessions.js';
import { num, optStr, str } from '../store/row.js';
import { insertRun } from '../store/session-runs.js';
import type { Db } from '../store/sqljs.js';
import { costIsUnknown } from '../store/cost-unknown.js';
import { setUnknownCost } from '../store/unpriced-runs.js';
import { createApprovalsRepository } from '../store/approvals.js';
import type { ExportApproval, ExportRun } from './format.js';

/**
 * What the agents record about a session beyond its messages (schema version 6): the CLI's
 * conversation a follow-up resumes, each run's usage, and the usage summed over them.
 * Export reads them; import writes them back as they were, not by replaying the runs, so
 * the totals come out exactly as exported.
 */
export interface AgentFields {
  agent?: AgentKind | undefined;
  usage?: Usage | undefined;
  conversation?: { kind: AgentKind; id: string } | undefined;
  runs?: ExportRun[] | undefined;
  /** What its agents asked before acting, and who decided. */
  approvals?: ExportApproval[] | undefined;
}

/** The runs of a session in the order they ended. */
export function readRuns(db: Db, sessionId: string): ExportRun[] {
  return db
    .all(
      `SELECT kind, conversation_id, ended_at, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, cost_usd, unpriced_model
       FROM agent_runs WHERE session_id = ? ORDER BY ended_at, rowid`,
      [sessionId],
    )
    .map((r) => {
      const usage: Usage = {
        inputTokens: num(r[3]),
        outputTokens: num(r[4]),
        cacheReadTokens: num(r[5]),
        cacheWriteTokens: num(r[6]),
      };
      if (r[7] !== null) usage.costUsd = num(r[7]);
      const kind = str(r[0]) as AgentKind;
      const model = optStr(r[8]);
      if (costIsUnknown({ kind, usage }))
        usage.costUnknown = { runs: 1, models: model === undefined ? [] : [model] };
      const conversationId = optStr(r[1]);
      return {
        kind,
        ...(conversationId === undefined ? {} : { conversationId }),
        endedAt: str(r[2]),
        usage,
      };
    });
}

/** What a session's agents asked and who decided, oldest first, as the export has them. */
export function readApprovals(db: Db, sessionId: string): ExportApproval[] {
  return createApprovalsRepository(db)
    .ofSession(sessionId)
    .map(({ workspaceId: _workspace, sessionId: _session, ...approval }) => approval);
}

/** Sets a session's agent fields to the exported ones; runs inside a store write. */
export function writeAgentFields(db: Db, sessionId: string, workspaceId: string, fields: AgentFields): void {
  db.changed(sessionId);
  const { usage, conversation } = fields;
  db.run(
    `UPDATE sessions SET agent_kind = ?, conversation_kind = ?, conversation_id = ?, usage_input = ?,
       usage_output = ?, usage_cache_read = ?, usage_cache_write = ?, usage_cost_usd = ?
     WHERE id = ?`,
    [
      fields.agent ?? null,
      conversation?.kind ?? null,
      conversation?.id ?? null,
      usage?.inputTokens ?? null,
      usage?.outputTokens ?? null,
      usage?.cacheReadTokens ?? null,
      usage?.cacheWriteTokens ?? null,
      usage?.costUsd ?? null,
      sessionId,
    ],
  );
  setUnknownCost(db, sessionId, usage?.costUnknown);
  // A session completed by a later import gets its runs once, not twice.
  db.run('DELETE FROM agent_runs WHERE session_id = ?', [sessionId]);
  for (const run of fields.runs ?? []) {
    insertRun(db, sessionId, workspaceId, { ...run, model: run.usage.costUnknown?.models[0] });
  }
  const approvals = createApprovalsRepository(db);
  for (const approval of fields.approvals ?? []) {
    // No run of this installation waits on a request still pending in the export.
    const settled =
      approval.decidedAt === undefined
        ? {
            decidedAt: approval.expiresAt,
            decision: 'expired' as const,
            decidedBy: { kind: 'sessiondesk' as const, reason: 'imported' as const },
          }
        : {};
    approvals.save({ ...approval, ...settled, sessionId, workspaceId });
  }
}
