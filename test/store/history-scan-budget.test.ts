// The follower's scans of a large first import: each reads for a bounded time, the most
// recently written sessions first, and the next goes on where it stopped, with nothing twice.
import { cpSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { importSource } from '../../src-main/history/importer.js';
import { type HistoryDeps } from '../../src-main/history/history-deps.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';

const SCENARIOS = ['plain-answer', 'todo-write', 'edit-and-commit'];
const stores: Store[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close({ snapshot: false });
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A Claude Code root holding the recorded sessions, the last one written most recently. */
function claudeRoot(): { root: string; newest: string } {
  const root = tempDir('history-budget-root-');
  folders.push(root);
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

async function workspaceWithSource(root: string) {
  const dataDir = tempDir('history-budget-');
  folders.push(dataDir);
  const store = await Store.open({
    dataDir,
    clock: systemClock,
    logger: silentLogger,
  });
  stores.push(store);
  const repos = createRepositories(store.db);
  const accounts = createAccounts(storageOf(store), systemClock);
  const user = await accounts.createUser({
    email: 'ada@example.test',
    name: 'Ada',
    password: 'correct horse',
  });
  const workspace = await accounts.createWorkspace({ name: 'Acme', ownerEmail: 'ada@example.test' });
  const source = {
    id: 'hsrc_budget',
    workspaceId: workspace.organizationId,
    kind: 'claude-code' as const,
    rootDir: root,
    authorId: user.id,
    paused: false,
    sessionCount: 0,
    messageCount: 0,
    createdAt: systemClock.now().toISOString(),
  };
  await store.write(() => repos.history.insertSource(source));
  const deps: HistoryDeps = { storage: storageOf(store), clock: systemClock };
  const sessions = () =>
    repos.sessions
      .list(workspace.organizationId, {}, {})
      .map((row) => ({ conversation: row.source?.conversationId, messages: row.messageCount }));
  return { deps, source, sessions };
}

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
