import { modelsFor } from '../../src-shared/agent-models.js';
import { modelPrice } from '../../src-shared/model-prices.js';

/**
 * A model an agent CLI offers that the price table has no price for: what a run whose cost
 * stays unknown uses, whichever model that is as of the table's date.
 */
export function unpricedModelOf(kind: 'claude-code' | 'codex' | 'gemini'): string {
  const model = modelsFor(kind).models.find((m) => m.includes('-') && modelPrice(m) === null);
  if (model === undefined) throw new Error(`the price table prices every ${kind} model: choose another case`);
  return model;
}
