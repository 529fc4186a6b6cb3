import { describe, expect, it } from 'vitest';
import { MODEL_PRICES_SOURCE } from '../../src-shared/model-prices.generated.js';
import { MODEL_PRICES_DATE, modelPrice, tokenCost } from '../../src-shared/model-prices.js';

describe('the price table', () => {
  it('is dated, and says which copy of the list it was made from', () => {
    expect(Number.isNaN(Date.parse(MODEL_PRICES_DATE))).toBe(false);
    expect(MODEL_PRICES_SOURCE.list).toBe("Pydantic's genai-prices");
    expect(MODEL_PRICES_SOURCE.from).toMatch(/^npm \S+@\d+\.\d+\.\d+$/u);
    expect(MODEL_PRICES_SOURCE.sha256).toMatch(/^[0-9a-f]{64}$/u);
  });

  it('prices tokens as Claude Code does for the same usage', () => {
    // Claude Code's own total_cost_usd for this usage in the plain-answer recording: 0.000729.
    const cost = tokenCost('claude-sonnet-4-5', {
      inputTokens: 120,
      outputTokens: 14,
      cacheReadTokens: 30,
      cacheWriteTokens: 40,
    });
    expect(cost).toBeCloseTo(0.000729, 12);
  });

  it('finds a model under the names CLIs and clouds report it by', () => {
    const sonnet = modelPrice('claude-sonnet-4-5');
    expect(sonnet).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    for (const name of [
      'claude-sonnet-4-5-20250929', // Claude Code's transcripts
      'Claude-Sonnet-4-5', // any case
      'anthropic/claude-sonnet-4-5', // a provider path
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0', // Bedrock
      'claude-sonnet-4-5@20250929', // Vertex
    ])
      expect(modelPrice(name), name).toEqual(sonnet);
    expect(modelPrice('models/gemini-2.5-pro')).toEqual(modelPrice('gemini-2.5-pro'));
    expect(modelPrice('gemini-2.5-pro')).not.toBeNull();
    // OpenAI dates its snapshots with dashes: a snapshot the list does not name is its model's.
    expect(modelPrice('openai/gpt-5.2-2030-01-01')).toEqual(modelPrice('gpt-5.2'));
    expect(modelPrice('gpt-5.2')).not.toBeNull();
  });

  it("prices the agent CLIs' default models", () => {
    // Claude Code's opus, Codex's default, Gemini CLI's flash, each as the CLI names it.
    for (const model of ['claude-opus-5-5', 'gpt-5.5', 'gemini-3.5-flash']) {
      expect(modelPrice(model), model).not.toBeNull();
    }
    expect(modelPrice('claude-opus-5-5')).toEqual({ input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 });
    // No cache write price listed: written to the cache, tokens cost what input does.
    expect(modelPrice('gpt-5.5')).toEqual({ input: 5, output: 30, cacheRead: 0.5, cacheWrite: 5 });
    // A tiered price (long-context tiers) counts at its base.
    expect(modelPrice('gemini-2.5-pro')).toEqual({
      input: 1.25,
      output: 10,
      cacheRead: 0.125,
      cacheWrite: 1.25,
    });
  });

  it("follows genai-prices' rules for a model's names, and its dated prices as of the table's date", () => {
    // A Claude model's dated form (`-20251101`), also read as `-2025-11-01`.
    expect(modelPrice('claude-opus-4-5-20251101')).toEqual(modelPrice('claude-opus-4-5'));
    // GPT-5.6 Luna's price fell by 80% on 2026-07-30: the table has the price in force.
    expect(modelPrice('gpt-5.6-luna')).toEqual({
      input: 0.2,
      output: 1.2,
      cacheRead: 0.02,
      cacheWrite: 0.25,
    });
    // Not priced per token (speech to text, by the minute): no price, not 0.
    expect(modelPrice('whisper-1')).toBeNull();
  });

  it('answers null (not 0) for a model it does not know', () => {
    const tokens = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(tokenCost('some-new-model', tokens)).toBeNull();
    expect(tokenCost('claude-unlisted-9', tokens)).toBeNull();
    expect(tokenCost(undefined, tokens)).toBeNull();
  });
});
