import type { AgentKind } from '../../src-shared/constants.js';
import { MAX_UNPRICED_MODELS, type CostUnknown, type Stats } from '../../src-shared/sessions.js';
import { num, str } from './row.js';
import { costIsUnknown, modelList, unpricedModel, type PricedRun } from './cost-unknown.js';
import type { Db } from './sqljs.js';

/** Runs of unknown cost (run-cost.ts) as the sql.js store counts them. */

/** Adds a run of unknown cost to its session's count, and its model to the session's list. */
export function addUnknownCost(db: Db, sessionId: string, run: PricedRun): void {
  if (!costIsUnknown(run)) return;
  const row = db.first('SELECT usage_unpriced_models FROM sessions WHERE id = ?', [sessionId]);
  const models = modelList(row?.[0]);
  const model = unpricedModel(run);
  if (model !== null && !models.includes(model) && models.length < MAX_UNPRICED_MODELS) models.push(model);
  db.run(
    `UPDATE sessions SET usage_unpriced_runs = coalesce(usage_unpriced_runs, 0) + 1,
       usage_unpriced_models = ? WHERE id = ?`,
    [JSON.stringify(models.sort()), sessionId],
  );
}

/** Sets a session's unknown cost as given (an import writes back what was exported). */
export function setUnknownCost(db: Db, sessionId: string, unknown: CostUnknown | undefined): void {
  db.run('UPDATE sessions SET usage_unpriced_runs = ?, usage_unpriced_models = ? WHERE id = ?', [
    unknown?.runs ?? null,
    unknown ? JSON.stringify(unknown.models.slice(0, MAX_UNPRICED_MODELS)) : null,
    sessionId,
  ]);
}

const UNKNOWN_RUN = `workspace_id = ? AND ended_at >= ? AND ended_at <= ? AND kind <> 'demo'
  AND cost_usd IS NULL AND input_tokens + output_tokens + cache_read_tokens + cache_write_tokens > 0`;

/** Per agent kind, the sessions whose runs in the window have an unknown cost, and the models why. */
export function unknownCostBetween(
  db: Db,
  workspaceId: string,
  since: string,
  until: string,
): Stats['costUnknownPastWeek'] {
  const params = [workspaceId, since, until];
  const byKind = db.all(
    `SELECT kind, count(DISTINCT session_id) FROM agent_runs WHERE ${UNKNOWN_RUN} GROUP BY kind ORDER BY kind`,
    params,
  );
  if (byKind.length === 0) return undefined;
  const models = db.all(
    `SELECT DISTINCT kind, unpriced_model FROM agent_runs
     WHERE ${UNKNOWN_RUN} AND unpriced_model IS NOT NULL ORDER BY kind, unpriced_model`,
    params,
  );
  return byKind.map((r) => {
    const agent = str(r[0]) as AgentKind;
    return {
      agent,
      sessions: num(r[1]),
      models: models
        .filter((m) => m[0] === agent)
        .map((m) => str(m[1]))
        .slice(0, MAX_UNPRICED_MODELS),
    };
  });
}
