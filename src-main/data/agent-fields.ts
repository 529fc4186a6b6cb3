import type { AgentKind } from '../../src-shared/constants.js';
import type { Usage } from '../../src-shared/sessions.js';
import { num, optStr, str } from '../store/row.js';
import type { Db } from '../store/sqljs.js';
import { costIsUnknown } from '../store/cost-unknown.js';
import { createApprovalsRepository } from '../store/approvals.js';
import type { ExportApproval, ExportRun } from './format.js';

/*
 * What an export reads of a session's agents (schema version 6); `sessions.setAgentFields`
 * writes it back on import and push.
 */

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
