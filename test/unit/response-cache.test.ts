import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { ENTRY_OVERHEAD_BYTES, ResponseCache } from '../../src-main/server/response-cache.js';
import { Store } from '../../src-main/store/store.js';
import { tempDir } from '../helpers/server.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function openStore(): Promise<Store> {
  const dataDir = tempDir();
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  cleanups.push(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return store;
}

const bytes = (n: number) => Buffer.alloc(n, 'x');
const bySession = (store: Store, maxBytes: number) =>
  new ResponseCache<Buffer>(store, { maxBytes, drop: 'that session', sizeOf: (b) => b.length });

describe('ResponseCache', () => {
  // An entry costs its answer, its key (two bytes a character) and a fixed overhead.
  const cost = (key: string, answer: number) => answer + key.length * 2 + ENTRY_OVERHEAD_BYTES;

  it('stays within its budget, dropping the least recently read first', async () => {
    const cache = bySession(await openStore(), 4 * cost('a', 200));
    cache.set('a', 'w', bytes(200));
    cache.set('b', 'w', bytes(200));
    cache.set('c', 'w', bytes(200));
    cache.set('d', 'w', bytes(200));
    expect(cache.size()).toEqual({ entries: 4, bytes: 4 * cost('a', 200) });
    expect(cache.get('a')?.value.length).toBe(200); // a is now the most recent
    cache.set('e', 'w', bytes(200)); // over budget: b, the least recently read, goes
    expect(cache.size()).toEqual({ entries: 4, bytes: 4 * cost('a', 200) });
    expect(cache.get('b')).toBeUndefined();
    expect(['a', 'c', 'd', 'e'].every((id) => cache.get(id) !== undefined)).toBe(true);
    cache.set('a', 'w', bytes(50)); // replacing an entry counts only the new bytes
    expect(cache.size()).toEqual({ entries: 4, bytes: 3 * cost('a', 200) + cost('a', 50) });
  });

  it('refuses one entry over a quarter of the budget, and holds nothing with a budget of 0', async () => {
    const store = await openStore();
    const cache = bySession(store, 4 * cost('big', 250));
    cache.set('big', 'w', bytes(251));
    expect(cache.get('big')).toBeUndefined();
    cache.set('big', 'w', bytes(250));
    expect(cache.get('big')).toBeDefined();
    const none = bySession(store, 0);
    none.set('a', 'w', bytes(1));
    expect(none.size()).toEqual({ entries: 0, bytes: 0 });
  });

  it('counts keys and overhead, so many empty answers under long keys stay within the budget', async () => {
    const lists = new ResponseCache<string>(await openStore(), {
      maxBytes: 100_000,
      drop: 'all',
      sizeOf: (text) => text.length,
    });
    for (let i = 0; i < 10_000; i += 1) lists.set(`${'a search text '.repeat(10)}${i}`, 'w', '[]');
    const { entries, bytes: held } = lists.size();
    expect(held).toBeLessThanOrEqual(100_000);
    expect(entries).toBeLessThan(300);
  });

  it('drops a session a write says is changing, and stops listening when closed', async () => {
    const store = await openStore();
    const cache = bySession(store, 1000);
    cache.set('a', 'w', bytes(10));
    cache.set('b', 'w', bytes(10));
    await store.write((db) => db.changed('a'));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    cache.close();
    expect(cache.size()).toEqual({ entries: 0, bytes: 0 });
    cache.set('b', 'w', bytes(10));
    await store.write((db) => db.changed('b'));
    expect(cache.get('b')).toBeDefined();
  });

  it("with drop: 'all', any session's change (a list can gain or lose any) drops everything", async () => {
    const store = await openStore();
    const lists = new ResponseCache<string>(store, { maxBytes: 1000, drop: 'all', sizeOf: (t) => t.length });
    lists.set('page 1', 'w', '[1]');
    lists.set('page 2', 'w', '[2]');
    await store.write((db) => db.changed('some session'));
    expect(lists.size()).toEqual({ entries: 0, bytes: 0 });
  });

  it('cannot be told of a change outside a write', async () => {
    const store = await openStore();
    expect(() => store.db.changed('a')).toThrow(/outside Store.write/);
  });
});
