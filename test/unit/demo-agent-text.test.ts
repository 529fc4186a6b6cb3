import { describe, expect, it } from 'vitest';
import { simulatedUsage, subjectOf } from '../../src-main/agents/kinds/demo/demo-agent.js';
import { seededRandom } from '../../src-main/seeded-random.js';

describe("the demo agent's words", () => {
  it.each([
    ['Add retries with backoff to the upload client.', 'Add retries with backoff to the upload client'],
    ['Fix the flaky login test. It fails on CI about once a day.', 'Fix the flaky login test'],
    ['Explain how the cache invalidation works', 'Explain how the cache invalidation works'],
    ['Why is the export slow?', 'Why is the export slow'],
  ])('names %j as %j: its first sentence, without the full stop', (prompt, subject) => {
    expect(subjectOf(prompt)).toBe(subject);
  });

  it('ends a subject it had to cut with "…"', () => {
    const prompt = `Rename ${'the very long module name '.repeat(6)}everywhere in the code base.`;
    const subject = subjectOf(prompt);
    expect(subject.endsWith('…')).toBe(true);
    expect(subject.length).toBeLessThanOrEqual(81);
    expect(prompt.startsWith(subject.slice(0, -1))).toBe(true);
  });
});

describe("the demo agent's simulated usage", () => {
  it('grows with the work done and has a cost, priced even for a model the table lacks', () => {
    const short = simulatedUsage(seededRandom(1), 2, 'claude-sonnet-4-5');
    const long = simulatedUsage(seededRandom(1), 12, 'claude-sonnet-4-5');
    expect(long.cacheReadTokens).toBeGreaterThan(short.cacheReadTokens);
    expect(short.costUsd).toBeGreaterThan(0);
    expect(simulatedUsage(seededRandom(1), 2, 'model-nobody-prices').costUsd).toBe(short.costUsd);
  });
});
