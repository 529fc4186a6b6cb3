import type { AgentKind } from '../../src-shared/constants.js';
import { MAX_UNPRICED_MODELS } from '../../src-shared/sessions.js';
import { costIsUnknown, modelList, unpricedModel } from '../store/cost-unknown.js';
import { agentFieldApprovals, agentFieldRun, exportedRun } from '../store/agent-fields.js';
import type { AgentState, RunRecord } from '../store/session-runs.js';
import type { Repos } from '../store/storage.js';
import { postgresApprovals } from './approvals.js';
import { send, type Queryable } from './rows.js';

type RunMethods = Pick<
  Repos['sessions'],
  | 'setAgentState'
  | 'setAgentKind'
  | 'conversation'
  | 'setConversation'
  | 'recordRun'
  | 'setAgentFields'
  | 'conversationUsage'
  | 'runs'
  | 'agentState'
  | 'runningIds'
  | 'agentInput'
>;

/** Adds one run's row to `agent_runs` (what `costPastWeek` sums). */
export async function insertRun(
  sql: Queryable,
  sessionId: string,
  workspaceId: string,
  run: RunRecord,
): Promise<void> {
  const { usage } = run;
  await sql`INSERT INTO agent_runs (session_id, workspace_id, kind, conversation_id, ended_at, input_tokens,
      output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, unpriced_model)
    VALUES (${sessionId}, ${workspaceId}, ${run.kind}, ${run.conversationId ?? null}, ${run.endedAt},
      ${usage.inputTokens}, ${usage.outputTokens}, ${usage.cacheReadTokens}, ${usage.cacheWriteTokens},
      ${usage.costUsd ?? null}, ${unpricedModel(run)})`;
}

/** What the sessions repository records of agent runs (`store/session-runs.ts`), on PostgreSQL. */
export function postgresSessionRuns(sql: Queryable): RunMethods {
  return {
    async setAgentState(sessionId, state) {
      await send(sql, sql`UPDATE sessions SET agent_state = ${state} WHERE id = ${sessionId}`);
    },

    async setAgentKind(sessionId, kind, isolation = null, acpAgent = null) {
      await send(
        sql,
        sql`UPDATE sessions SET agent_kind = ${kind}, isolation = ${isolation}, acp_agent = ${acpAgent}
        WHERE id = ${sessionId}`,
      );
    },

    async conversation(sessionId) {
      const [row] = await sql<Array<{ conversation_kind: string | null; conversation_id: string | null }>>`
        SELECT conversation_kind, conversation_id FROM sessions WHERE id = ${sessionId}`;
      if (!row || row.conversation_kind === null || row.conversation_id === null) return null;
      return { kind: row.conversation_kind as AgentKind, id: row.conversation_id };
    },

    async setConversation(sessionId, kind, id) {
      await send(
        sql,
        sql`UPDATE sessions SET conversation_kind = ${kind}, conversation_id = ${id} WHERE id = ${sessionId}`,
      );
    },

    async recordRun(sessionId, workspaceId, run) {
      const { usage } = run;
      await insertRun(sql, sessionId, workspaceId, run);
      const cost = usage.costUsd ?? null;
      // A cost stays absent until some run reports one.
      await sql`UPDATE sessions SET usage_input = coalesce(usage_input, 0) + ${usage.inputTokens},
          usage_output = coalesce(usage_output, 0) + ${usage.outputTokens},
          usage_cache_read = coalesce(usage_cache_read, 0) + ${usage.cacheReadTokens},
          usage_cache_write = coalesce(usage_cache_write, 0) + ${usage.cacheWriteTokens},
          usage_cost_usd = CASE WHEN ${cost}::double precision IS NULL THEN usage_cost_usd
            ELSE coalesce(usage_cost_usd, 0) + ${cost}::double precision END
        WHERE id = ${sessionId}`;
      if (!costIsUnknown(run)) return;
      const [row] = await sql<Array<{ usage_unpriced_models: string | null }>>`
        SELECT usage_unpriced_models FROM sessions WHERE id = ${sessionId}`;
      const models = modelList(row?.usage_unpriced_models);
      const model = unpricedModel(run);
      if (model !== null && !models.includes(model) && models.length < MAX_UNPRICED_MODELS)
        models.push(model);
      await sql`UPDATE sessions SET usage_unpriced_runs = coalesce(usage_unpriced_runs, 0) + 1,
          usage_unpriced_models = ${JSON.stringify(models.sort())} WHERE id = ${sessionId}`;
    },

    async setAgentFields(sessionId, workspaceId, fields) {
      const { usage, conversation } = fields;
      const unknown = usage?.costUnknown;
      await sql`UPDATE sessions SET agent_kind = ${fields.agent ?? null},
          conversation_kind = ${conversation?.kind ?? null}, conversation_id = ${conversation?.id ?? null},
          usage_input = ${usage?.inputTokens ?? null}, usage_output = ${usage?.outputTokens ?? null},
          usage_cache_read = ${usage?.cacheReadTokens ?? null}, usage_cache_write = ${usage?.cacheWriteTokens ?? null},
          usage_cost_usd = ${usage?.costUsd ?? null}, usage_unpriced_runs = ${unknown?.runs ?? null},
          usage_unpriced_models = ${unknown ? JSON.stringify(unknown.models.slice(0, MAX_UNPRICED_MODELS)) : null}
        WHERE id = ${sessionId}`;
      await sql`DELETE FROM agent_runs WHERE session_id = ${sessionId}`;
      for (const run of fields.runs ?? []) await insertRun(sql, sessionId, workspaceId, agentFieldRun(run));
      const approvals = postgresApprovals(sql);
      for (const approval of agentFieldApprovals(sessionId, workspaceId, fields))
        await approvals.save(approval);
    },

    async conversationUsage(sessionId, conversationId) {
      const [row] = await sql<Array<Record<'input' | 'output' | 'cache_read' | 'cache_write', number>>>`
        SELECT coalesce(sum(input_tokens), 0)::bigint AS input, coalesce(sum(output_tokens), 0)::bigint AS output,
          coalesce(sum(cache_read_tokens), 0)::bigint AS cache_read,
          coalesce(sum(cache_write_tokens), 0)::bigint AS cache_write
        FROM agent_runs WHERE session_id = ${sessionId} AND conversation_id = ${conversationId}`;
      return {
        inputTokens: row?.input ?? 0,
        outputTokens: row?.output ?? 0,
        cacheReadTokens: row?.cache_read ?? 0,
        cacheWriteTokens: row?.cache_write ?? 0,
      };
    },

    async runs(sessionId) {
      const rows = await sql<Array<Record<string, unknown>>>`
        SELECT kind, conversation_id, ended_at, input_tokens, output_tokens, cache_read_tokens,
          cache_write_tokens, cost_usd, unpriced_model
        FROM agent_runs WHERE session_id = ${sessionId}
        -- As SQLite orders them (see exportedRun): text as bytes, an absent value first.
        ORDER BY ended_at COLLATE "C", kind COLLATE "C", conversation_id COLLATE "C" NULLS FIRST,
          input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd NULLS FIRST,
          unpriced_model COLLATE "C" NULLS FIRST`;
      return rows.map((r) =>
        exportedRun({
          kind: r.kind as string,
          conversationId: r.conversation_id as string | null,
          endedAt: r.ended_at as string,
          inputTokens: Number(r.input_tokens),
          outputTokens: Number(r.output_tokens),
          cacheReadTokens: Number(r.cache_read_tokens),
          cacheWriteTokens: Number(r.cache_write_tokens),
          costUsd: r.cost_usd as number | null,
          unpricedModel: r.unpriced_model as string | null,
        }),
      );
    },

    async agentState(sessionId) {
      const [row] = await sql<Array<{ agent_state: string | null }>>`
        SELECT agent_state FROM sessions WHERE id = ${sessionId}`;
      return row?.agent_state ? (row.agent_state as AgentState) : null;
    },

    async runningIds() {
      const rows = await sql<Array<{ id: string }>>`SELECT id FROM sessions WHERE agent_state = 'running'`;
      return rows.map((r) => r.id);
    },

    async agentInput(sessionId) {
      const [row] = await sql<
        Array<{ repo_url: string | null; base_branch: string; first_message: string | null }>
      >`SELECT repo_url, base_branch, first_message FROM sessions WHERE id = ${sessionId}`;
      if (!row) return null;
      const input: { repoUrl?: string; baseBranch: string; firstMessage?: string } = {
        baseBranch: row.base_branch,
      };
      if (row.repo_url !== null) input.repoUrl = row.repo_url;
      if (row.first_message !== null) input.firstMessage = row.first_message;
      return input;
    },
  };
}
