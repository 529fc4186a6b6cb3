import type { TestProject } from 'vitest/node';
import { migratedPool } from './postgres.js';
import { startCluster } from './postgres-cluster.js';
import { TEMPLATE_DATABASE } from './test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the run's cluster's maintenance database, where test servers' databases are made. */
    postgresTestCluster: string;
  }
}

/**
 * vitest.postgres.config.ts's global setup: one throw-away cluster for the whole run, holding
 * a migrated template each test server's fresh database is copied from (a copy takes a fraction
 * of a migration; the server still migrates it, as `serve --database` does, and finds nothing
 * to do). Removed after the run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startCluster();
  try {
    const template = await migratedPool(await cluster.createDatabase(TEMPLATE_DATABASE));
    // A database with a connection open cannot be copied.
    await template.end();
    project.provide('postgresTestCluster', `postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return () => cluster.stop();
}
