import type { AgentKind } from '../../src-shared/constants.js';
import { modelPrice } from '../../src-shared/model-prices.js';
import type { CostUnknown, Usage } from '../../src-shared/sessions.js';

/**
 * Runs whose cost is unknown: they used tokens, their agent reported no cost, and nothing could
 * price them. Their tokens count like any others, but no dollar figure includes them, so every
 * figure that leaves them out says so (a session's `usage.costUnknown`, the list's
 * `costUnknownPastWeek`) instead of passing for the whole cost.
 */

/** Tokens and cost of one run, with the model it ran where that is known. */
export interface PricedRun {
  kind: AgentKind;
  usage: Usage;
  model?: string | undefined;
}

/** The demo agent runs no model: its made-up cost is always there. */
export function costIsUnknown(run: PricedRun): boolean {
  const { usage } = run;
  const tokens = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  return run.kind !== 'demo' && usage.costUsd === undefined && tokens > 0;
}

/** The model a run of unknown cost ran, when the price table is why: it has no price for it. */
export function unpricedModel(run: PricedRun): string | null {
  const model = run.model?.trim();
  return costIsUnknown(run) && model && modelPrice(model) === null ? model.slice(0, 200) : null;
}

/** The list kept in a session's `usage_unpriced_models` (a JSON array): bad text reads as none. */
export function modelList(text: unknown): string[] {
  if (typeof text !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === 'string') : [];
  } catch {
    return [];
  }
}

/** A session's unknown cost from its `usage_unpriced_runs` and `usage_unpriced_models` columns. */
export function costUnknownOf(runs: unknown, models: unknown): CostUnknown | undefined {
  const count = typeof runs === 'number' ? runs : 0;
  return count > 0 ? { runs: count, models: modelList(models) } : undefined;
}
