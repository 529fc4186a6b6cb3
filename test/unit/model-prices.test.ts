import { describe, expect, it } from 'vitest';
import { MODEL_PRICES_DATE, modelPrice, tokenCost } from '../../src-shared/model-prices.js';

describe('the price table', () => {
  it('is dated', () => {
    expect(Number.isNaN(Date.parse(MODEL_PRICES_DATE))).toBe(false);
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

  it('finds a dated model name, and answers null (not 0) for a model it does not know', () => {
    expect(modelPrice('claude-sonnet-4-5-20250929')).toEqual(modelPrice('claude-sonnet-4-5'));
    const tokens = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(tokenCost('some-new-model', tokens)).toBeNull();
    expect(tokenCost(undefined, tokens)).toBeNull();
  });
});
