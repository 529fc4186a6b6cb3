// scripts/refresh-model-prices.mjs as a person runs it, on a small list of LiteLLM's form.
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

/** Entries as LiteLLM writes them: per-token dollars, a provider, a mode. */
const LIST = {
  sample_spec: { litellm_provider: 'one of https://docs.litellm.ai/docs/providers', input_cost_per_token: 0 },
  'claude-sonnet-4-5': {
    litellm_provider: 'anthropic',
    mode: 'chat',
    input_cost_per_token: 3e-6,
    output_cost_per_token: 1.5e-5,
    cache_read_input_token_cost: 3e-7,
    cache_creation_input_token_cost: 3.75e-6,
    input_cost_per_token_above_200k_tokens: 6e-6,
  },
  'gpt-5': {
    litellm_provider: 'openai',
    mode: 'chat',
    input_cost_per_token: 1.25e-6,
    output_cost_per_token: 1e-5,
  },
  'gemini/gemini-2.5-pro': {
    litellm_provider: 'gemini',
    mode: 'chat',
    input_cost_per_token: 1.25e-6,
    output_cost_per_token: 1e-5,
    cache_read_input_token_cost: 3.125e-7,
  },
  // Other providers' copies, other kinds of model, and fine-tunes are not the CLIs' models.
  'gemini-2.5-pro': {
    litellm_provider: 'vertex_ai-language-models',
    mode: 'chat',
    input_cost_per_token: 9,
    output_cost_per_token: 9,
  },
  'bedrock/anthropic.claude-sonnet-4-5': {
    litellm_provider: 'bedrock',
    mode: 'chat',
    input_cost_per_token: 9,
    output_cost_per_token: 9,
  },
  'text-embedding-3-small': {
    litellm_provider: 'openai',
    mode: 'embedding',
    input_cost_per_token: 2e-8,
    output_cost_per_token: 0,
  },
  'ft:gpt-4o-2024-08-06': {
    litellm_provider: 'openai',
    mode: 'chat',
    input_cost_per_token: 3.75e-6,
    output_cost_per_token: 1.5e-5,
  },
  'gpt-image-1': { litellm_provider: 'openai', mode: 'image_generation', output_cost_per_image: 0.04 },
};

describe('npm run refresh:prices', () => {
  it('keeps the Anthropic, OpenAI and Gemini API models of the list, per million tokens, and says where they came from', () => {
    const dir = folder();
    const list = join(dir, 'model_prices_and_context_window.json');
    const out = join(dir, 'prices.generated.ts');
    writeFileSync(list, JSON.stringify(LIST));
    const run = refresh(['--file', list, '--out', out, '--date', '2026-11-20']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('3 model prices from file model_prices_and_context_window.json');
    const text = readFileSync(out, 'utf8');
    expect(text).toContain("generatedOn: '2026-11-20'");
    expect(text).toContain("from: 'file model_prices_and_context_window.json'");
    expect(text).toMatch(/sha256: '[0-9a-f]{64}'/u);
    const entries = [...text.matchAll(/^ {2}'?([\w.-]+)'?: (\{.*\}),$/gmu)].map(([, name, price]) => [
      name,
      price,
    ]);
    expect(entries).toEqual([
      ['claude-sonnet-4-5', '{ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }'],
      // The Gemini API's price (gemini/…), not Vertex AI's; no cache write price listed: input's.
      ['gemini-2.5-pro', '{ input: 1.25, output: 10, cacheRead: 0.3125, cacheWrite: 1.25 }'],
      // No cache prices listed: cached tokens cost what input does.
      ['gpt-5', '{ input: 1.25, output: 10, cacheRead: 1.25, cacheWrite: 1.25 }'],
    ]);
  });

  it('says what is wrong with a list it cannot use, and writes nothing', () => {
    const dir = folder();
    const out = join(dir, 'prices.generated.ts');
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"claude-sonnet-4-5": {');
    const notJson = refresh(['--file', broken, '--out', out]);
    expect(notJson.status).toBe(1);
    expect(notJson.stderr).toMatch(
      /^refresh-model-prices: file broken\.json: model_prices_and_context_window\.json is not JSON/u,
    );
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, JSON.stringify({ 'text-embedding-3-small': LIST['text-embedding-3-small'] }));
    const none = refresh(['--file', empty, '--out', out]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('priced no Anthropic, OpenAI or Gemini model');
    const missing = refresh(['--file', join(dir, 'nowhere.json'), '--out', out]);
    expect(missing.stderr).toContain('nowhere.json: no such file');
    expect(() => readFileSync(out)).toThrow();
  });
});
