import type { ModelPrice } from './model-price.js';
import { GENERATED_PRICES, MODEL_PRICES_SOURCE } from './model-prices.generated.js';

/**
 * Model prices, in US dollars per million tokens, from LiteLLM's price list as it stood in
 * MODEL_PRICES_SOURCE (model-prices.generated.ts, written by `npm run refresh:prices`). The one
 * place Session Desk prices tokens: used only where an agent CLI records no cost of its own
 * (Codex, Gemini CLI, Claude Code files without a cost record). A model missing here has an
 * unknown cost (null), never 0.
 */
export const MODEL_PRICES_DATE: string = MODEL_PRICES_SOURCE.generatedOn;

export type { ModelPrice };

/**
 * The names a model goes by besides the vendor's plain one, as CLIs and clouds report them:
 * a provider path (`anthropic/…`, `models/…`), Bedrock's `us.anthropic.…-v1:0`, Vertex's
 * `…@20250929`, and a trailing date (`-20250929`, `-2025-08-07`). Stripped in that order.
 */
const PROVIDER_PATH = /^.*\//u;
const BEDROCK_FORM = /^(?:[a-z]{2,4}\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$/u;
const VERTEX_DATE = /@\d{8}$/u;
const TRAILING_DATE = /-(?:\d{8}|\d{4}-\d\d-\d\d)$/u;

/** A model's price: by its exact name, else by the plain name under its provider's forms. */
export function modelPrice(model: string): ModelPrice | null {
  const name = model.trim().toLowerCase();
  const exact = GENERATED_PRICES[name];
  if (exact) return exact;
  const plain = name.replace(PROVIDER_PATH, '').replace(BEDROCK_FORM, '$1').replace(VERTEX_DATE, '');
  return GENERATED_PRICES[plain] ?? GENERATED_PRICES[plain.replace(TRAILING_DATE, '')] ?? null;
}

export interface PricedTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** What `tokens` cost on `model` (input excludes cache reads), or null for an unknown model. */
export function tokenCost(model: string | undefined, tokens: PricedTokens): number | null {
  const price = model ? modelPrice(model) : null;
  if (!price) return null;
  const dollars =
    tokens.inputTokens * price.input +
    tokens.outputTokens * price.output +
    tokens.cacheReadTokens * price.cacheRead +
    tokens.cacheWriteTokens * price.cacheWrite;
  return dollars / 1_000_000;
}
