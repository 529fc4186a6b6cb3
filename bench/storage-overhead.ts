// What the asynchronous storage interface costs a write on sql.js: one message appended to a
// session (the write agents and imports make most), done as before (`store.write` with the
// synchronous repositories) and through `storage.write` (the repositories' asynchronous
// faces), rounds taking turns in one process on one store; the CPU a write, median of rounds.
//
//   node ./bin/run-ts.js bench/storage-overhead.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';
import { Store } from '../src-main/store/store.js';

const WRITES = 1_000;
const ROUNDS = 8;
const dir = mkdtempSync(join(tmpdir(), 'storage-overhead-'));
const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
const repos = createRepositories(store.db);
const storage = storageOf(store);
const at = '2026-11-27T00:00:00.000Z';
await storage.write(async (tx) => {
  await tx.users.insert({
    id: 'user_1',
    email: 'a@example.com',
    name: 'A',
    passwordHash: 'x',
    createdAt: at,
  });
  await tx.workspaces.insert({ id: 'org_bench', name: 'Bench', createdAt: at });
});
let sessions = 0;
async function newSession(): Promise<string> {
  const id = `session_${String(sessions++).padStart(24, '0')}`;
  await storage.write((tx) =>
    tx.sessions.insert({
      id,
      workspaceId: 'org_bench',
      authorId: 'user_1',
      title: 'Bench',
      model: 'claude-opus-4-6',
      createdAt: at,
      baseBranch: 'main',
    }),
  );
  return id;
}
const message = {
  type: 'assistant' as const,
  message: { content: [{ type: 'text' as const, text: 'x'.repeat(600) }] },
};

const ways = {
  before: (id: string) =>
    store.write(() => {
      repos.sessions.appendMessage(id, 'org_bench', message, null, at);
      repos.sessions.update(id, { status: 'active' }, at);
      return repos.sessions.find(id);
    }),
  after: (id: string) =>
    storage.write(async (tx) => {
      await tx.sessions.appendMessage(id, 'org_bench', message, null, at);
      await tx.sessions.update(id, { status: 'active' }, at);
      return tx.sessions.find(id);
    }),
};
const cpu: Record<keyof typeof ways, number[]> = { before: [], after: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    const id = await newSession();
    const started = process.cpuUsage();
    // Awaited one at a time, as a run's messages are.
    for (let i = 0; i < WRITES; i++) await ways[name](id);
    const used = process.cpuUsage(started);
    cpu[name].push((used.user + used.system) / WRITES);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
const before = median(cpu.before);
const after = median(cpu.after);
console.log(`${WRITES} appends a round, ${ROUNDS} rounds each, CPU a write (median):`);
console.log(`  store.write, synchronous repositories: ${before.toFixed(1)} µs`);
console.log(
  `  storage.write, asynchronous faces:     ${after.toFixed(1)} µs (${(after / before).toFixed(2)}×)`,
);
await store.close({ snapshot: false });
rmSync(dir, { recursive: true, force: true });
