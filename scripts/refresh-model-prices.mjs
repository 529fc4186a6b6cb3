#!/usr/bin/env node
// Writes src-shared/model-prices.generated.ts, the price table Session Desk prices tokens with,
// from Pydantic's genai-prices (the data its npm package bundles). Run by hand
// (`npm run refresh:prices`); the product never fetches prices itself.
//
//   node scripts/refresh-model-prices.mjs                      the pinned npm package below
//   node scripts/refresh-model-prices.mjs --package NAME@VERSION
//   node scripts/refresh-model-prices.mjs --file PATH          the providers as JSON, in genai-prices'
//                                                              form (its data.json)
//   ... [--out PATH] [--date YYYY-MM-DD]
//
// Only the npm registry is reachable from the machines this is built on, so the data comes from
// the package, fetched with `npm pack` (no install, no install scripts) into a temporary folder
// and read through the package's own `findProvider`. LiteLLM's list, the other maintained one,
// has an npm copy (ai-model-usage-cost) too old to price the CLIs' current default models.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** The package that ships the data: its version is pinned so a refresh is a reviewed change. */
export const DEFAULT_PACKAGE = '@pydantic/genai-prices@0.1.8';

/** genai-prices' providers for the vendors whose CLIs Session Desk runs (Claude Code, Codex, Gemini CLI). */
const PROVIDERS = ['anthropic', 'openai', 'google'];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_OUT = join(ROOT, 'src-shared', 'model-prices.generated.ts');

/** The rules genai-prices names models by; anything else is refused rather than guessed. */
const RULES = new Set(['equals', 'starts_with', 'ends_with', 'contains', 'regex', 'or', 'and']);

function checkedMatch(match, where) {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    throw new Error(`${where}: a match rule should be an object`);
  }
  const [rule, ...more] = Object.keys(match);
  if (!RULES.has(rule) || more.length > 0)
    throw new Error(`${where}: unknown match rule ${JSON.stringify(match)}`);
  if (rule === 'or' || rule === 'and') {
    if (!Array.isArray(match[rule])) throw new Error(`${where}: ${rule} should list rules`);
    return { [rule]: match[rule].map((m) => checkedMatch(m, where)) };
  }
  if (typeof match[rule] !== 'string') throw new Error(`${where}: ${rule} should be text`);
  // As genai-prices reads it: a plain RegExp.
  if (rule === 'regex') new RegExp(match[rule]);
  return { [rule]: match[rule] };
}

/** A price per million tokens: a number, or a tiered one's base (long-context tiers are not applied). */
function mtok(value) {
  const price = typeof value === 'object' && value !== null ? value.base : value;
  return typeof price === 'number' && Number.isFinite(price) && price >= 0 ? price : undefined;
}

/**
 * The price in force on `date`: the last dated one that has started (genai-prices lists them in
 * order), else the one without a date. Prices by time of day are left aside.
 */
function priceOn(prices, date) {
  if (!Array.isArray(prices)) return prices;
  let chosen;
  for (const entry of prices) {
    const constraint = entry.constraint;
    if (constraint === undefined) chosen ??= entry.prices;
    else if (constraint.start_date !== undefined && constraint.start_date <= date) chosen = entry.prices;
  }
  return chosen ?? prices.find((entry) => entry.constraint === undefined)?.prices;
}

/**
 * A model's price in dollars per million tokens, or null when it is not priced per token (an
 * image, audio or embedding model). Where no cache price is given, cached tokens are priced as
 * input: that is what they are billed as when a vendor lists no discount or premium.
 */
function tokenPrice(prices, date) {
  const price = priceOn(prices, date) ?? {};
  const input = mtok(price.input_mtok);
  const output = mtok(price.output_mtok);
  if (input === undefined || output === undefined) return null;
  return {
    input,
    output,
    cacheRead: mtok(price.cache_read_mtok) ?? input,
    cacheWrite: mtok(price.cache_write_mtok) ?? input,
  };
}

/**
 * The kept providers, each with how it names its models and every model's rule and price, in
 * genai-prices' order (the first model whose rule matches a name is that name's).
 */
export function providersFromData(data, date) {
  if (!Array.isArray(data)) throw new Error('the providers should be a JSON array');
  const providers = PROVIDERS.map((id) => {
    const provider = data.find((p) => p?.id === id);
    if (!provider) throw new Error(`no provider "${id}" in the data`);
    if (!Array.isArray(provider.models)) throw new Error(`${id}: models should be a list`);
    return {
      id,
      match: checkedMatch(provider.model_match, `${id}'s model_match`),
      models: provider.models.map((model) => ({
        id: String(model.id),
        match: checkedMatch(model.match, `${id}/${model.id}`),
        price: tokenPrice(model.prices, date),
      })),
    };
  });
  if (providers.every((p) => p.models.every((m) => m.price === null))) {
    throw new Error('the data priced no Anthropic, OpenAI or Google model per token');
  }
  return providers;
}

/** The TypeScript module holding the providers, saying where they came from. */
export function moduleText(providers, source) {
  return `// Generated by scripts/refresh-model-prices.mjs (npm run refresh:prices): do not edit by hand.
import type { PricedProvider } from './model-price.js';

/** Where the prices below come from, and when they were taken. */
export const MODEL_PRICES_SOURCE = {
  list: "Pydantic's genai-prices",
  from: ${JSON.stringify(source.from)},
  sha256: ${JSON.stringify(source.sha256)},
  generatedOn: ${JSON.stringify(source.generatedOn)},
} as const;

/**
 * Anthropic's, OpenAI's and Google's models: how each provider's and each model's names look
 * (genai-prices' rules, the first model that matches a name being its), and the model's price
 * in US dollars per million tokens (null: not priced per token).
 */
export const GENERATED_PROVIDERS: readonly PricedProvider[] = ${JSON.stringify(providers)};
`;
}

/** Prettier's form of the module (the project's settings), so the format check finds nothing to change. */
async function formatted(text, out) {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(DEFAULT_OUT)) ?? {};
    return await prettier.format(text, { ...options, filepath: out });
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return text;
    throw error;
  }
}

/** The providers a genai-prices package bundles: fetched with `npm pack`, read with its findProvider. */
async function dataFromPackage(spec) {
  const folder = mkdtempSync(join(tmpdir(), 'model-prices-'));
  try {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', spec, '--json', '--pack-destination', folder], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    execFileSync('tar', ['-xzf', join(folder, packed[0].filename), '-C', folder]);
    const manifest = JSON.parse(readFileSync(join(folder, 'package', 'package.json'), 'utf8'));
    const entry = manifest.exports?.['.']?.import?.default ?? manifest.module;
    if (typeof entry !== 'string') throw new Error(`${spec} names no ES module entry`);
    const { findProvider } = await import(pathToFileURL(join(folder, 'package', entry)).href);
    if (typeof findProvider !== 'function') throw new Error(`${spec} has no findProvider`);
    const data = PROVIDERS.map((id) => findProvider({ providerId: id })).filter(Boolean);
    return { bytes: Buffer.from(JSON.stringify(data)), from: `npm ${packed[0].name}@${packed[0].version}` };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      package: { type: 'string' },
      file: { type: 'string' },
      out: { type: 'string', default: DEFAULT_OUT },
      date: { type: 'string', default: new Date().toISOString().slice(0, 10) },
    },
  });
  if (values.package && values.file) throw new Error('give --package or --file, not both');
  if (!/^\d{4}-\d\d-\d\d$/u.test(values.date)) throw new Error(`--date ${values.date}: use YYYY-MM-DD`);
  let source;
  if (values.file) {
    if (!statSync(values.file, { throwIfNoEntry: false })?.isFile()) {
      throw new Error(`--file ${values.file}: no such file`);
    }
    source = { bytes: readFileSync(values.file), from: `file ${basename(values.file)}` };
  } else {
    source = await dataFromPackage(values.package ?? DEFAULT_PACKAGE);
  }
  let data;
  try {
    data = JSON.parse(source.bytes.toString('utf8'));
  } catch (error) {
    throw new Error(`${source.from}: the providers are not JSON (${error.message})`, { cause: error });
  }
  let providers;
  try {
    providers = providersFromData(data, values.date);
  } catch (error) {
    throw new Error(`${source.from}: ${error.message}`, { cause: error });
  }
  const sha256 = createHash('sha256').update(source.bytes).digest('hex');
  const text = moduleText(providers, { from: source.from, sha256, generatedOn: values.date });
  writeFileSync(values.out, await formatted(text, values.out));
  const priced = providers.reduce((n, p) => n + p.models.filter((m) => m.price !== null).length, 0);
  console.log(`${priced} model prices from ${source.from} written to ${values.out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`refresh-model-prices: ${error.message}`);
    process.exit(1);
  });
}
