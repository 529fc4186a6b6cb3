import { describe, expect, it } from 'vitest';
import { MODEL_PRICES_SOURCE } from '../../src-shared/model-prices.generated.js';
import { MODEL_PRICES_DATE, modelPrice, tokenCost } from '../../src-shared/model-prices.js';

describe('the price table', () => {
  it('is dated, and says which copy of the list it was made from', () => {
    expect(Number.isNaN(Date.parse(MODEL_PRICES_DATE))).toBe(false);
    expect(MODEL_PRICES_SOURCE.list).toBe("LiteLLM's model_prices_and_context_window.json");
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

  it('answers null (not 0) for a model it does not know', () => {
    const tokens = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(tokenCost('some-new-model', tokens)).toBeNull();
    expect(tokenCost('claude-sonnet-4-5-preview', tokens)).toBeNull();
    expect(tokenCost(undefined, tokens)).toBeNull();
  });
});
