import { createRepositories, type Repositories } from './repositories.js';
import type { Awaiting, Repos, Storage } from './storage.js';
import { AwaitInsideWriteError, type OpenWrite, type Store } from './store.js';
import type { TranscriptSource } from './transcript-source.js';

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

  /**
   * Inside a write, each repository's face is made once and shared by every write; the write a
   * call belongs to is the `write` of the object it is called on, made per write (cheap: no
   * closures), so a call that comes after its write was given up is refused, whatever runs then.
   */
  const insideFaces = Object.fromEntries(
    names.map((name) => {
      const face: Record<string, unknown> = {};
      for (const [method, fn] of Object.entries(repositories[name])) {
        if (typeof fn !== 'function') continue;
        face[method] = function (this: { write: OpenWrite }, ...args: unknown[]) {
          return this.write.open
            ? settled(() => (fn as AnyMethod)(...args))
            : Promise.reject(new AwaitInsideWriteError());
        };
      }
      return [name, face];
    }),
  ) as Record<keyof Repositories, object>;

  class Inside {
    private readonly made: Partial<Record<keyof Repositories, object>> = {};
    constructor(readonly write: OpenWrite) {}
    face(name: keyof Repositories): object {
      return (this.made[name] ??= Object.create(insideFaces[name], {
        write: { value: this.write },
      }) as object);
    }
  }
  for (const name of names) {
    Object.defineProperty(Inside.prototype, name, {
      get(this: Inside) {
        return this.face(name);
      },
    });
  }

  return {
    repos,
    write: (fn) => store.writeAsync((_db, write) => fn(new Inside(write) as unknown as Repos)),
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

const transcriptSources = new WeakMap<Store, TranscriptSource>();

/**
 * The transcripts of an open store, its files: read up to a length once the store has handed
 * every byte counted so far to its file (`whenTranscriptSettled`).
 */
export function transcriptsOf(store: Store): TranscriptSource {
  const known = transcriptSources.get(store);
  if (known) return known;
  const { transcripts } = store;
  const storage = storageOf(store);
  const source: TranscriptSource = {
    // Checked and started in one synchronous step, and the storage's reads run at once when no
    // write is open: `read`'s first call sees the settled instant.
    async settled(sessionId, read) {
      return await store.whenTranscriptSettled(sessionId, () => read(storage.repos));
    },
    readPayloads: (sessionId, from, to) => transcripts.readPayloads(sessionId, from, to),
    readFrame: (sessionId, offset, to) => transcripts.readFrame(sessionId, offset, to),
    readPayloadRange: (sessionId, offset, to, from, until) =>
      transcripts.readPayloadRange(sessionId, offset, to, from, until),
    readRaw: (sessionId, length) => transcripts.readRaw(sessionId, length),
  };
  transcriptSources.set(store, source);
  return source;
}

/** An open store's storage and transcripts: what reading sessions' messages takes. */
export function readsOf(store: Store): { storage: Storage; transcripts: TranscriptSource } {
  return { storage: storageOf(store), transcripts: transcriptsOf(store) };
}
