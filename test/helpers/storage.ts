import { rm } from 'node:fs/promises';
import { afterAll } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import type { NewSession } from '../../src-main/store/sessions.js';
import type { Repos, Storage } from '../../src-main/store/storage.js';
import { Store } from '../../src-main/store/store.js';
import { tempDir } from './server.js';

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

/**
 * One session of Ada's in workspace org_a, with Ada and the workspace: what a contract test
 * of one session's records starts from. Runs inside the caller's write.
 */
export async function addAdasSession(
  tx: Pick<Repos, 'users' | 'workspaces' | 'sessions'>,
  session: Pick<NewSession, 'id' | 'title' | 'model' | 'createdAt' | 'initialMessage'>,
): Promise<void> {
  const at = session.createdAt;
  await tx.users.insert({
    id: 'usr_ada',
    email: 'ada@example.com',
    name: 'Ada',
    passwordHash: 'h',
    createdAt: at,
  });
  await tx.workspaces.insert({ id: 'org_a', name: 'A', createdAt: at });
  await tx.sessions.insert({ ...session, workspaceId: 'org_a', authorId: 'usr_ada', baseBranch: 'main' });
}
