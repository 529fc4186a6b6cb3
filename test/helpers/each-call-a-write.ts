import type { Repos, Storage } from '../../src-main/store/storage.js';

type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

/**
 * The sql.js repositories as a contract test calls them on either database. On sql.js a change
 * is made inside a write, so each call here is one write of its own, as each statement on a
 * PostgreSQL pool commits alone.
 */
export function eachCallAWrite(storage: Storage): Repos {
  const repository = (name: keyof Repos) =>
    new Proxy(
      {},
      {
        get:
          (_target, method: string) =>
          (...args: unknown[]) =>
            storage.write((tx) => (tx[name] as unknown as Methods)[method]!(...args)),
      },
    );
  return new Proxy({} as Repos, { get: (_target, name: string) => repository(name as keyof Repos) });
}
