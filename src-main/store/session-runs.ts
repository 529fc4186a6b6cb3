import type { Usage } from '../../src-shared/index.js';
import type { AgentKind } from '../../src-shared/constants.js';
import type { Isolation } from '../../src-shared/sessions.js';
import type { Db } from './sqljs.js';
import { num, optStr, str } from './row.js';
import { unpricedModel, type PricedRun } from './cost-unknown.js';
import { addUnknownCost, setUnknownCost } from './unpriced-runs.js';
import { createApprovalsRepository } from './approvals.js';
import {
  agentFieldApprovals,
  agentFieldRun,
  exportedRun,
  type AgentFields,
  type ExportedRun,
} from './agent-fields.js';

export type AgentState = 'queued' | 'running' | 'needs_input';

/** One run's usage as recorded when it ends. */
export interface RunRecord extends PricedRun {
  conversationId?: string | undefined;
  endedAt: string;
}

/** Adds one run's row to `agent_runs` (what `costPastWeek` sums); inside a store write. */
export function insertRun(db: Db, sessionId: string, workspaceId: string, run: RunRecord): void {
  const { usage } = run;
  db.run(
    `INSERT INTO agent_runs (session_id, workspace_id, kind, conversation_id, ended_at, input_tokens,
       output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, unpriced_model)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      sessionId,
      workspaceId,
      run.kind,
      run.conversationId ?? null,
      run.endedAt,
      usage.inputTokens,
      usage.outputTokens,
      usage.cacheReadTokens,
      usage.cacheWriteTokens,
      usage.costUsd ?? null,
      unpricedModel(run),
    ],
  );
}

/**
 * What the sessions repository records of the agent runs on a session: which kind runs it and
 * whether it is queued or running, the agent's own conversation to resume, and each run's usage
 * added to the session's totals. Spread into the sessions repository: one repository to its callers.
 */
export function sessionRunMethods(db: Db) {
  return {
    setAgentState(sessionId: string, state: AgentState | null): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET agent_state = ? WHERE id = ?', [state, sessionId]);
    },

    /** The kind of agent running (or that last ran) the session, and how its program is held. */
    setAgentKind(
      sessionId: string,
      kind: AgentKind,
      isolation: Isolation | null = null,
      acpAgent: string | null = null,
    ): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET agent_kind = ?, isolation = ?, acp_agent = ? WHERE id = ?', [
        kind,
        isolation,
        acpAgent,
        sessionId,
      ]);
    },

    /** The agent CLI's own conversation id for the session, with the kind that printed it. */
    conversation(sessionId: string): { kind: AgentKind; id: string } | null {
      const row = db.first('SELECT conversation_kind, conversation_id FROM sessions WHERE id = ?', [
        sessionId,
      ]);
      if (!row || row[0] === null || row[1] === null) return null;
      return { kind: str(row[0]) as AgentKind, id: str(row[1]) };
    },

    setConversation(sessionId: string, kind: AgentKind, id: string): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET conversation_kind = ?, conversation_id = ? WHERE id = ?', [
        kind,
        id,
        sessionId,
      ]);
    },

    /** Records a run's usage and adds it to the session's totals. */
    recordRun(sessionId: string, workspaceId: string, run: RunRecord): void {
      db.changed(sessionId);
      const { usage } = run;
      insertRun(db, sessionId, workspaceId, run);
      // A cost stays absent until some run reports one.
      db.run(
        `UPDATE sessions SET usage_input = coalesce(usage_input, 0) + ?,
           usage_output = coalesce(usage_output, 0) + ?, usage_cache_read = coalesce(usage_cache_read, 0) + ?,
           usage_cache_write = coalesce(usage_cache_write, 0) + ?,
           usage_cost_usd = CASE WHEN ? IS NULL THEN usage_cost_usd ELSE coalesce(usage_cost_usd, 0) + ? END
         WHERE id = ?`,
        [
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadTokens,
          usage.cacheWriteTokens,
          usage.costUsd ?? null,
          usage.costUsd ?? null,
          sessionId,
        ],
      );
      addUnknownCost(db, sessionId, run);
    },

    /**
     * Sets a session's agent fields to the given ones (an import's or a push's): its agent,
     * conversation and usage, its runs in place of those it had (a session completed by a
     * later import gets them once, not twice), and its approvals saved over theirs.
     */
    setAgentFields(sessionId: string, workspaceId: string, fields: AgentFields): void {
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
      db.run('DELETE FROM agent_runs WHERE session_id = ?', [sessionId]);
      for (const run of fields.runs ?? []) insertRun(db, sessionId, workspaceId, agentFieldRun(run));
      const approvals = createApprovalsRepository(db);
      for (const approval of agentFieldApprovals(sessionId, workspaceId, fields)) approvals.save(approval);
    },

    /** A session's runs, in the order they ended (see `exportedRun`), as an export holds them. */
    runs(sessionId: string): ExportedRun[] {
      return db
        .all(
          `SELECT kind, conversation_id, ended_at, input_tokens, output_tokens, cache_read_tokens,
             cache_write_tokens, cost_usd, unpriced_model
           FROM agent_runs WHERE session_id = ? ORDER BY ended_at, kind, conversation_id, input_tokens, output_tokens, cache_read_tokens,
             cache_write_tokens, cost_usd, unpriced_model`,
          [sessionId],
        )
        .map((r) =>
          exportedRun({
            kind: str(r[0]),
            conversationId: optStr(r[1]) ?? null,
            endedAt: str(r[2]),
            inputTokens: num(r[3]),
            outputTokens: num(r[4]),
            cacheReadTokens: num(r[5]),
            cacheWriteTokens: num(r[6]),
            costUsd: r[7] === null ? null : num(r[7]),
            unpricedModel: optStr(r[8]) ?? null,
          }),
        );
    },

    /** The usage of a session's earlier runs in one conversation (what a resumed CLI counts again). */
    conversationUsage(sessionId: string, conversationId: string): Omit<Usage, 'costUsd'> {
      const row = db.first(
        `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
           coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0)
         FROM agent_runs WHERE session_id = ? AND conversation_id = ?`,
        [sessionId, conversationId],
      );
      return {
        inputTokens: num(row?.[0] ?? 0),
        outputTokens: num(row?.[1] ?? 0),
        cacheReadTokens: num(row?.[2] ?? 0),
        cacheWriteTokens: num(row?.[3] ?? 0),
      };
    },

    agentState(sessionId: string): AgentState | null {
      const row = db.first('SELECT agent_state FROM sessions WHERE id = ?', [sessionId]);
      return row?.[0] ? (str(row[0]) as AgentState) : null;
    },

    /** Sessions an agent was working on, e.g. when the app stopped. */
    runningIds(): string[] {
      return db.all("SELECT id FROM sessions WHERE agent_state = 'running'").map((r) => str(r[0]));
    },

    /** What an agent needs to start: the repository and base branch, and the first prompt. */
    agentInput(sessionId: string): { repoUrl?: string; baseBranch: string; firstMessage?: string } | null {
      const row = db.first('SELECT repo_url, base_branch, first_message FROM sessions WHERE id = ?', [
        sessionId,
      ]);
      if (!row) return null;
      const input: { repoUrl?: string; baseBranch: string; firstMessage?: string } = {
        baseBranch: str(row[1]),
      };
      const repoUrl = optStr(row[0]);
      const firstMessage = optStr(row[2]);
      if (repoUrl !== undefined) input.repoUrl = repoUrl;
      if (firstMessage !== undefined) input.firstMessage = firstMessage;
      return input;
    },
  };
}
