import { rm } from 'node:fs/promises';
import { afterAll } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import type { Repos, Storage } from '../../src-main/store/storage.js';
import { Store } from '../../src-main/store/store.js';
import { tempDir } from './server.js';

type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

/**
 * A repository of `storage` on which each call is one write of its own: a contract test's
 * calls on sql.js, where a change is made only inside a write.
 */
export function eachCallAWrite<K extends keyof Repos>(storage: Storage, name: K): Repos[K] {
  return new Proxy(
    {},
    {
      get:
        (_target, method: string) =>
        (...args: unknown[]) =>
          storage.write((tx) => (tx[name] as unknown as Methods)[method]!(...args)),
    },
  ) as Repos[K];
}

/**
 * A sql.js store in a data directory of its own for the calling test file, opened when asked
 * and closed and removed after its tests. Call inside a describe().
 */
export function useSqlJsStore(prefix: string): { open(): Promise<Store> } {
  const dir = tempDir(prefix);
  let store: Store | undefined;
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    open: async () => (store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger })),
  };
}
