import { rmSync } from 'node:fs';
import type { Sql } from 'postgres';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { indexMessage } from '../../src-main/search/postgres-text.js';
import { buildApp } from '../../src-main/server/app.js';
import { postgresRunLeases } from '../../src-main/store-postgres/leases.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { migratedPool } from './postgres.js';
import { tempDir } from './server.js';

export interface TeamApp {
  url: string;
  storage: Storage;
  sql: Sql;
  close(): Promise<void>;
}

/**
 * A team server's app over PostgreSQL at `url`, listening on a loopback port in this process,
 * built as `serve --database` builds it (appends indexed for search in their transaction).
 */
export async function startTeamApp(
  url: string,
  options: { searchTimeLimitMs?: number } = {},
): Promise<TeamApp> {
  const sql = await migratedPool(url);
  const dataDir = tempDir('sessiondesk-team-');
  const leases = await postgresRunLeases(url);
  const { transcripts, ...storage } = createPostgresStorage(sql, { indexer: indexMessage });
  const app = await buildApp({
    team: { storage, transcripts, dataDir, sql, url, leases },
    clock: systemClock,
    logger: silentLogger,
    config: { allowedHosts: [], ...options },
    agents: { demoPaceMs: 3_600_000 },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    storage,
    sql,
    async close() {
      await app.close();
      await leases.close();
      await sql.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
