import type { Sql } from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { connect } from '../../src-main/store-postgres/connect.js';
import { migratePostgres } from '../../src-main/store-postgres/migrations.js';
import { findPostgres, startCluster, type PostgresCluster } from './postgres-cluster.js';
import type { Tool } from './tools.js';

/** PostgreSQL 15 or later, for `describe('…', requireTools(postgresTool()), …)`. */
export function postgresTool(): Tool {
  const found = findPostgres();
  return {
    name: 'PostgreSQL 15+ (initdb, pg_ctl, postgres)',
    found: 'bin' in found,
    install: 'missing' in found ? found.missing : '',
  };
}

export interface PostgresForTests {
  /** The URL of this test file's database. */
  url(): string;
  /** Another empty database in the same cluster, for a test that needs a fresh one. */
  freshDatabase(): Promise<string>;
  cluster(): PostgresCluster;
}

/**
 * A cluster of its own for the calling test file, started before its tests and removed after
 * them, with a database of the file's own. Call inside the describe() that requireTools
 * guards, so that nothing starts where PostgreSQL is missing.
 */
export function usePostgres(): PostgresForTests {
  let cluster: PostgresCluster | undefined;
  let url: string | undefined;
  let made = 0;
  beforeAll(async () => {
    cluster = await startCluster();
    url = await cluster.createDatabase('sessiondesk_test');
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);
  const started = () => {
    if (!cluster || !url)
      throw new Error('usePostgres(): the cluster is not started (called outside a describe?)');
    return { cluster, url };
  };
  return {
    url: () => started().url,
    cluster: () => started().cluster,
    freshDatabase: () => started().cluster.createDatabase(`fresh_${++made}`),
  };
}

/** A pool on `url` whose database holds the whole schema, as a team server's start leaves it. */
export async function migratedPool(url: string): Promise<Sql> {
  const sql = await connect(url);
  await migratePostgres(sql, { now: () => new Date() });
  return sql;
}

/**
 * A migrated pool on the calling test file's database, opened when asked and ended after its
 * tests. Call inside the describe() that requireTools guards.
 */
export function useMigratedPool(): { open(): Promise<Sql> } {
  const pg = usePostgres();
  let sql: Sql | undefined;
  afterAll(async () => sql?.end());
  return { open: async () => (sql = await migratedPool(pg.url())) };
}

/**
 * A database of the cluster whose default collation is ICU's en-US, as on a server set up with
 * a language's locale (the test clusters are C-locale: byte order, like sql.js): a query that
 * orders or compares text without `COLLATE "C"` answers differently here.
 */
export async function linguisticDatabase(pg: PostgresForTests, name: string): Promise<string> {
  const admin = await connect(pg.url());
  try {
    await admin.unsafe(
      `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(pg.url());
  url.pathname = `/${name}`;
  return url.toString();
}
