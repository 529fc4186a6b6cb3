import { createRepositories, type Repositories } from './repositories.js';
import type { Awaiting, Repos, Storage } from './storage.js';
import { AwaitInsideWriteError, type OpenWrite, type Store } from './store.js';

type AnyMethod = (...args: unknown[]) => unknown;

/** A call that ran at once, as a promise: its value, or its throw as a rejection. */
function settled(call: () => unknown): Promise<unknown> {
  try {
    return Promise.resolve(call());
  } catch (err) {
    return Promise.reject(err);
  }
}

function awaiting<R extends object>(
  repository: R,
  run: (call: () => unknown) => Promise<unknown>,
): Awaiting<R> {
  const faced: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(repository)) {
    if (typeof method !== 'function') continue;
    faced[name] = (...args: unknown[]) => run(() => (method as AnyMethod)(...args));
  }
  return faced as Awaiting<R>;
}

/**
 * The desktop's storage: the sql.js repositories, whose calls run at once, behind the
 * asynchronous faces services use on either database. A read waits while a write's function
 * runs, so it never sees half of one; inside a write, the repositories answer only as long as
 * that write is open.
 */
export function createSqlJsStorage(store: Store, repositories: Repositories): Storage {
  const names = Object.keys(repositories) as Array<keyof Repositories>;

  async function afterWrites(call: () => unknown): Promise<unknown> {
    for (let open = store.afterOpenWrite; open; open = store.afterOpenWrite) await open;
    return call();
  }
  const read = (call: () => unknown) => (store.afterOpenWrite ? afterWrites(call) : settled(call));
  const repos = Object.fromEntries(names.map((name) => [name, awaiting(repositories[name], read)])) as Repos;

  /** The repositories for one write, each made when the write first uses it. */
  function inside(write: OpenWrite): Repos {
    const run = (call: () => unknown) =>
      write.open ? settled(call) : Promise.reject(new AwaitInsideWriteError());
    const made = new Map<keyof Repositories, unknown>();
    const tx = {} as Repos;
    for (const name of names) {
      Object.defineProperty(tx, name, {
        enumerable: true,
        get() {
          if (!made.has(name)) made.set(name, awaiting(repositories[name], run));
          return made.get(name);
        },
      });
    }
    return tx;
  }

  return {
    repos,
    write: (fn) => store.writeAsync((_db, write) => fn(inside(write))),
  };
}

const made = new WeakMap<Store, Storage>();

/** The one storage of an open store, made on first use. */
export function storageOf(store: Store): Storage {
  let storage = made.get(store);
  if (!storage) {
    storage = createSqlJsStorage(store, createRepositories(store.db));
    made.set(store, storage);
  }
  return storage;
}
