import { rmSync } from 'node:fs';
import type { Sql } from 'postgres';
import { systemClock } from '../../src-main/clock.js';
import { connect } from '../../src-main/store-postgres/connect.js';
import { migratePostgres } from '../../src-main/store-postgres/migrations.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { startCluster, type PostgresCluster } from '../helpers/postgres-cluster.js';
import { withDataDirStorage } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';

/**
 * Where a spec's server keeps its data: the desktop's data directory (sql.js), or a team
 * server's PostgreSQL (`serve --database`), chosen by the Playwright project (`backend`).
 */
export type Backend = 'desktop' | 'team-server';

let cluster: PostgresCluster | undefined;
let databases = 0;

/**
 * The worker's cluster, started once and used by every server the worker starts, each on a
 * database of its own. Without one (the desktop project) servers use their data directory.
 */
export async function startTeamCluster(): Promise<() => Promise<void>> {
  const started = await startCluster();
  cluster = started;
  return async () => {
    cluster = undefined;
    await started.stop();
  };
}

/** A fresh place for one server: a data directory, and on a team server an empty database. */
export interface Place {
  dataDir: string;
  databaseUrl?: string;
}

export async function newPlace(prefix = 'sessiondesk-e2e-'): Promise<Place> {
  const dataDir = tempDir(prefix);
  if (!cluster) return { dataDir };
  return { dataDir, databaseUrl: await cluster.createDatabase(`e2e_${process.pid}_${++databases}`) };
}

/**
 * Runs `seed` on the place's storage, with no server running: the data directory's store, or
 * the database migrated as a team server's start leaves it. As in a data directory, what is
 * written here is not indexed for search: the server's catch-up indexes it when it starts.
 */
export async function seedPlace<T>(place: Place, seed: (storage: Storage) => Promise<T>): Promise<T> {
  if (!place.databaseUrl) return await withDataDirStorage(place.dataDir, seed);
  const sql: Sql = await connect(place.databaseUrl);
  try {
    await migratePostgres(sql, { now: () => systemClock.now() });
    return await seed(createPostgresStorage(sql));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The options that point a command at the place's data: `--database`, or `--data-dir`. */
export function storeOptions(place: Place): string[] {
  return place.databaseUrl ? ['--database', place.databaseUrl] : ['--data-dir', place.dataDir];
}

/** `sessiondesk serve` on the place, with `args` after its own. */
export function servePlace(place: Place, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const database = place.databaseUrl ? ['--database', place.databaseUrl] : [];
  return startServe(place.dataDir, [...database, ...args], env);
}

/** Removes the place's data directory (its database goes with the cluster). */
export function removePlace(place: Place): void {
  rmSync(place.dataDir, { recursive: true, force: true });
}
