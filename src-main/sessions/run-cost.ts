import { tokenCost } from '../../src-shared/model-prices.js';
import { roundDollars } from '../store/session-row.js';
import type { RunRecord } from '../store/session-runs.js';

/**
 * The model a session's runs were told to run, when its name is one model: a CLI resolves an
 * alias (`opus`, `auto`, `flash`) by itself, and an empty name leaves the choice to the CLI, so
 * neither says which model ran. Every model id the vendors use has a version number in it.
 */
function namedModel(sessionModel: string): string | undefined {
  const name = sessionModel.trim();
  return /\d/u.test(name) && !/[[\]\s]/u.test(name) ? name : undefined;
}

/**
 * A run as it is recorded. Codex and Gemini CLI report tokens and no cost; a run that has no
 * cost and no model of its own ran the model its session named, and is priced by the table
 * on that model. Its cost stays unknown when the session named none or the table lacks it.
 */
export function withSessionModel(
  run: Omit<RunRecord, 'endedAt'>,
  sessionModel: string,
): Omit<RunRecord, 'endedAt'> {
  if (run.kind === 'demo' || run.usage.costUsd !== undefined || run.model !== undefined) return run;
  const model = namedModel(sessionModel);
  if (model === undefined) return run;
  const cost = tokenCost(model, run.usage);
  return { ...run, model, usage: cost === null ? run.usage : { ...run.usage, costUsd: roundDollars(cost) } };
}
