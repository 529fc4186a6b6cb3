import type { Repositories } from './repositories.js';

/** A repository as services call it through `Storage`: every method answers a promise. */
export type Awaiting<R> = {
  [K in keyof R]: R[K] extends (...args: infer A) => infer T ? (...args: A) => Promise<Awaited<T>> : never;
};

/** Every repository, each method answering a promise: what services call, on either database. */
export type Repos = { [K in keyof Repositories]: Awaiting<Repositories[K]> };

/**
 * The record of everything as services see it: the desktop's sql.js store
 * (`sqljs-storage.ts`) or a team server's PostgreSQL (`store-postgres/`). Services talk to
 * this, never to a database.
 */
export interface Storage {
  /** Reads. A read never sees a write half made. */
  readonly repos: Repos;
  /**
   * Runs `fn` as one atomic write, and resolves once it is durable. Inside, `fn` reads and
   * writes through `tx` alone and awaits nothing else: a file read or a request belongs
   * before the write or after it (on sql.js, every write waits while one runs).
   */
  write<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
}
