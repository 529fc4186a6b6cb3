import type { ModelPrice, NameRule } from './model-price.js';
import { GENERATED_PROVIDERS, MODEL_PRICES_SOURCE } from './model-prices.generated.js';

/**
 * Model prices, in US dollars per million tokens, from Pydantic's genai-prices as it stood in
 * MODEL_PRICES_SOURCE (model-prices.generated.ts, written by `npm run refresh:prices`). The one
 * place Session Desk prices tokens: used only where an agent CLI records no cost of its own
 * (Codex, Gemini CLI, Claude Code files without a cost record). A model missing here has an
 * unknown cost (null), never 0.
 */
export const MODEL_PRICES_DATE: string = MODEL_PRICES_SOURCE.generatedOn;

export type { ModelPrice };

/** Whether `name` (lower case) is one the rule describes, as genai-prices reads its rules. */
function matches(rule: NameRule, name: string): boolean {
  if ('or' in rule) return rule.or.some((r) => matches(r, name));
  if ('and' in rule) return rule.and.every((r) => matches(r, name));
  if ('equals' in rule) return name === rule.equals.toLowerCase();
  if ('starts_with' in rule) return name.startsWith(rule.starts_with.toLowerCase());
  if ('ends_with' in rule) return name.endsWith(rule.ends_with.toLowerCase());
  if ('contains' in rule) return name.includes(rule.contains.toLowerCase());
  let regex = compiled.get(rule.regex);
  if (!regex) compiled.set(rule.regex, (regex = new RegExp(rule.regex)));
  return regex.test(name);
}

/** The rules' regular expressions, each compiled once: a lookup tries many models' rules. */
const compiled = new Map<string, RegExp>();

/** The model a name is, by its provider's rule and then the first model rule that takes it. */
function pricedAs(name: string): ModelPrice | null | undefined {
  const provider = GENERATED_PROVIDERS.find((p) => matches(p.match, name));
  return provider?.models.find((m) => matches(m.match, name))?.price;
}

/**
 * The names a model goes by besides the vendor's plain one, as CLIs and clouds report them:
 * a provider path (`anthropic/…`, `models/…`), Bedrock's `us.anthropic.…-v1:0`, Vertex's
 * `…@20250929`. A date written `-20250929` is also tried as `-2025-09-29`, as genai-prices does,
 * and a snapshot the rules do not name (`-20300101`, `-2030-01-01`) is its model's.
 */
const PROVIDER_PATH = /^.*\//u;
const BEDROCK_FORM = /^(?:[a-z]{2,4}\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$/u;
const VERTEX_DATE = /@\d{8}$/u;
const COMPACT_DATE = /-(20\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/gu;
const TRAILING_DATE = /-(?:\d{8}|\d{4}-\d\d-\d\d)$/u;

/** A model's price: by its name, else by its plain name under its provider's forms. */
export function modelPrice(model: string): ModelPrice | null {
  const name = model.trim().toLowerCase();
  const plain = name.replace(PROVIDER_PATH, '').replace(BEDROCK_FORM, '$1').replace(VERTEX_DATE, '');
  const dated = plain.replace(COMPACT_DATE, '-$1-$2-$3');
  for (const candidate of new Set([name, plain, dated, plain.replace(TRAILING_DATE, '')])) {
    const price = pricedAs(candidate);
    if (price !== undefined) return price;
  }
  return null;
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
