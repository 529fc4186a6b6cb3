import { beforeAll, describe, expect, it } from 'vitest';
import { formatSoak, runSoak, type SoakResult } from '../../bench/soak.js';

/**
 * The bounded crash soak (`npm run soak` runs 200 rounds): 20 SIGKILLs of a real
 * `sessiondesk serve` while writers and demo agents write, two of them aimed at a snapshot
 * (rounds 10 and 20: one inside it, one just after), a restart after each, and the checks
 * of bench/soak.ts (acknowledged writes, integrity_check, nothing half applied).
 */
describe('crash soak: 20 rounds of SIGKILL under concurrent writes', () => {
  let result: SoakResult;

  beforeAll(async () => {
    result = await runSoak({
      rounds: 20,
      writers: 4,
      snapshotEvery: 10,
      checkEvery: 5,
      killAfterMs: [50, 500],
      paceMs: 5,
      seed: 20_261_121,
      // Small, so the aimed rounds reach a snapshot quickly; journals now hold no message bodies.
      snapshotAfterBytes: 1024 * 1024,
      // Sessions left 'active' are asserted on their own below, so the other checks still run.
      stuckActive: 'count',
    });
    if (!result.passed || result.stuckActive.count > 0) process.stderr.write(`${formatSoak(result)}\n`);
  }, 240_000);

  it('keeps every acknowledged write, passes integrity_check, and leaves nothing half applied', () => {
    expect(result.violations).toEqual([]);
    expect(result.rounds).toBe(20);
    expect(result.acknowledged.total).toBeGreaterThan(100);
    expect(result.recovered).toBe(result.acknowledged.total);
    expect(result.integrityChecks).toBeGreaterThanOrEqual(5);
    expect(result.agentMessages).toBeGreaterThan(0);
    // Round 10 (and the next ones, until one lands) is killed inside a snapshot, 20 just after.
    expect(result.snapshots.killedDuringSnapshot).toBeGreaterThanOrEqual(1);
    expect(result.snapshots.completed).toBeGreaterThanOrEqual(1);
  });

  it('leaves no session active with no agent after a restart', () => {
    expect(result.stuckActive).toEqual({ count: 0, shapes: {} });
  });
});
