// The follower's scans of a large first import: each reads for a bounded time, the most
// recently written sessions first, and the next goes on where it stopped, with nothing twice.
import { cpSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importSource } from '../../src-main/history/importer.js';
import { useCleanups } from '../helpers/cleanups.js';
import { ROOT } from '../helpers/cli.js';
import { storeWithHistorySource } from '../helpers/history-source.js';
import { tempDir } from '../helpers/server.js';

const SCENARIOS = ['plain-answer', 'todo-write', 'edit-and-commit'];
const cleanup = useCleanups();

/** A Claude Code root holding the recorded sessions, the last one written most recently. */
function claudeRoot(): { root: string; newest: string } {
  const root = tempDir('history-budget-root-');
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  const anHourAgo = Date.now() / 1000 - 3600;
  const seen = new Set<string>();
  let newest = '';
  SCENARIOS.forEach((scenario, i) => {
    const from = join(ROOT, 'test', 'fixtures', 'history', 'claude-code', '2.1.330', scenario);
    cpSync(from, root, { recursive: true });
    for (const project of readdirSync(join(root, 'projects'))) {
      for (const name of readdirSync(join(root, 'projects', project))) {
        const path = join(root, 'projects', project, name);
        if (!statSync(path).isFile() || seen.has(path)) continue;
        seen.add(path);
        // Each scenario's files a minute older than the next scenario's.
        utimesSync(path, anHourAgo + i * 60, anHourAgo + i * 60);
        newest = name.replace(/\.jsonl$/u, '');
      }
    }
  });
  return { root, newest };
}

const workspaceWithSource = (root: string) => storeWithHistorySource(root, cleanup);

describe('a scan of history with a time budget', () => {
  it('reads the newest session first, stops when out of time, and the next scans complete it once', async () => {
    const { root, newest } = claudeRoot();
    const whole = await workspaceWithSource(root);
    await importSource(whole.deps, whole.source);
    const expected = whole
      .sessions()
      .sort((a, b) => String(a.conversation).localeCompare(String(b.conversation)));
    expect(expected).toHaveLength(SCENARIOS.length);

    const scanned = await workspaceWithSource(root);
    // Out of time from the start: each scan still reads a batch (here one line) of one file.
    const appeared: string[] = [];
    let scans = 0;
    for (;;) {
      const budget = { until: Date.now() - 1, stopped: false };
      await importSource(scanned.deps, scanned.source, { batchBytes: 1, budget });
      scans += 1;
      for (const { conversation } of scanned.sessions())
        if (conversation && !appeared.includes(conversation)) appeared.push(conversation);
      if (!budget.stopped) break;
      expect(scans).toBeLessThan(10_000);
    }
    // The most recently written session came first.
    expect(appeared[0]).toBe(newest);
    expect(appeared).toHaveLength(SCENARIOS.length);
    // One line a scan: many scans, and the same sessions and messages as one whole import.
    expect(scans).toBeGreaterThan(SCENARIOS.length * 3);
    expect(
      scanned.sessions().sort((a, b) => String(a.conversation).localeCompare(String(b.conversation))),
    ).toEqual(expected);
  });
});
