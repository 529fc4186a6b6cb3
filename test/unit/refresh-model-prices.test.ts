// scripts/refresh-model-prices.mjs as a person runs it, on a small set of providers in
// genai-prices' form (its data.json).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { useCleanups } from '../helpers/cleanups.js';

const cleanup = useCleanups();
const SCRIPT = join(ROOT, 'scripts', 'refresh-model-prices.mjs');

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'refresh-prices-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function refresh(args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8' });
}

/** Providers as genai-prices writes them: name rules, prices per million tokens. */
const DATA = [
  {
    id: 'anthropic',
    model_match: { contains: 'claude' },
    models: [
      {
        id: 'claude-sonnet-4-5',
        match: { or: [{ starts_with: 'claude-sonnet-4-5' }, { starts_with: 'claude-sonnet-4.5' }] },
        prices: { input_mtok: 3, cache_write_mtok: 3.75, cache_read_mtok: 0.3, output_mtok: 15 },
      },
    ],
  },
  {
    id: 'openai',
    model_match: { or: [{ starts_with: 'gpt-' }, { regex: '^o[134]' }] },
    models: [
      // A price that changed: the one in force on the table's date is kept.
      {
        id: 'gpt-5.6-luna',
        match: { equals: 'gpt-5.6-luna' },
        prices: [
          { prices: { input_mtok: 1, output_mtok: 6 } },
          { constraint: { start_date: '2026-07-30' }, prices: { input_mtok: 0.2, output_mtok: 1.2 } },
        ],
      },
      // Long-context tiers are not applied: the base price.
      {
        id: 'gpt-5.5',
        match: { equals: 'gpt-5.5' },
        prices: {
          input_mtok: { base: 5, tiers: [{ start: 271999, price: 10 }] },
          cache_read_mtok: { base: 0.5, tiers: [{ start: 271999, price: 1 }] },
          output_mtok: { base: 30, tiers: [{ start: 271999, price: 45 }] },
        },
      },
      // Not priced per token.
      { id: 'whisper-1', match: { equals: 'whisper-1' }, prices: { input_audio_mtok: 6 } },
    ],
  },
  {
    id: 'google',
    model_match: { contains: 'gemini' },
    models: [
      {
        id: 'gemini-3.5-flash',
        match: { equals: 'gemini-3.5-flash' },
        prices: { input_mtok: 1.5, output_mtok: 9 },
      },
    ],
  },
  // Other providers are not the CLIs'.
  { id: 'groq', model_match: { contains: 'llama' }, models: [] },
];

describe('npm run refresh:prices', () => {
  it("keeps the Anthropic, OpenAI and Google models with their name rules, the price in force on the table's date, and says where they came from", async () => {
    const dir = folder();
    const file = join(dir, 'data.json');
    const out = join(dir, 'prices.generated.ts');
    writeFileSync(file, JSON.stringify(DATA));
    const run = refresh(['--file', file, '--out', out, '--date', '2026-11-20']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('4 model prices from file data.json');
    const text = readFileSync(out, 'utf8');
    expect(text).toContain("generatedOn: '2026-11-20'");
    expect(text).toContain("from: 'file data.json'");
    expect(text).toMatch(/sha256: '[0-9a-f]{64}'/u);
    // The module as the product loads it.
    const { GENERATED_PROVIDERS: providers } = (await import(out)) as {
      GENERATED_PROVIDERS: { id: string; models: { id: string; price: unknown }[] }[];
    };
    expect(providers.map((p) => p.id)).toEqual(['anthropic', 'openai', 'google']);
    expect(Object.fromEntries(providers.flatMap((p) => p.models.map((m) => [m.id, m.price])))).toEqual({
      'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      'gpt-5.6-luna': { input: 0.2, output: 1.2, cacheRead: 0.2, cacheWrite: 0.2 },
      'gpt-5.5': { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 5 },
      'whisper-1': null,
      // No cache prices listed: cached tokens cost what input does.
      'gemini-3.5-flash': { input: 1.5, output: 9, cacheRead: 1.5, cacheWrite: 1.5 },
    });
    expect(text).toContain(
      "match: { or: [{ starts_with: 'claude-sonnet-4-5' }, { starts_with: 'claude-sonnet-4.5' }] }",
    );
    // Before the price change, the price then.
    const before = refresh(['--file', file, '--out', out, '--date', '2026-07-29']);
    expect(before.status).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain(
      'price: { input: 1, output: 6, cacheRead: 1, cacheWrite: 1 }',
    );
  });

  it('says what is wrong with data it cannot use, and writes nothing', () => {
    const dir = folder();
    const out = join(dir, 'prices.generated.ts');
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '[{"id": "anthropic"');
    const notJson = refresh(['--file', broken, '--out', out]);
    expect(notJson.status).toBe(1);
    expect(notJson.stderr).toMatch(/^refresh-model-prices: file broken\.json: the providers are not JSON/u);
    const noProvider = join(dir, 'no-google.json');
    writeFileSync(noProvider, JSON.stringify(DATA.filter((p) => p.id !== 'google')));
    const missingGoogle = refresh(['--file', noProvider, '--out', out]);
    expect(missingGoogle.status).toBe(1);
    expect(missingGoogle.stderr).toContain('no provider "google" in the data');
    const oddRule = join(dir, 'odd-rule.json');
    writeFileSync(
      oddRule,
      JSON.stringify(DATA.map((p) => (p.id === 'google' ? { ...p, model_match: { fuzzy: 'gemini' } } : p))),
    );
    const odd = refresh(['--file', oddRule, '--out', out]);
    expect(odd.status).toBe(1);
    expect(odd.stderr).toContain('unknown match rule {"fuzzy":"gemini"}');
    const missing = refresh(['--file', join(dir, 'nowhere.json'), '--out', out]);
    expect(missing.stderr).toContain('nowhere.json: no such file');
    expect(() => readFileSync(out)).toThrow();
  });
});
