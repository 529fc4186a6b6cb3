import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect } from '../../src-main/store-postgres/connect.js';

/**
 * Which database the test servers run over: sql.js in their data directory (the desktop's, and
 * the default), or PostgreSQL as `serve --database` runs (SESSIONDESK_TEST_DATABASE=postgres,
 * which vitest.postgres.config.ts sets for the API tests).
 */
export type TestBackend = 'sqljs' | 'postgres';

function backendFromEnvironment(): TestBackend {
  const asked = (process.env.SESSIONDESK_TEST_DATABASE ?? '').trim().toLowerCase();
  if (asked === '' || asked === 'sqljs' || asked === 'sql.js') return 'sqljs';
  if (asked === 'postgres' || asked === 'postgresql') return 'postgres';
  throw new Error(`SESSIONDESK_TEST_DATABASE is "${asked}": give postgres, or sqljs (the default).`);
}

export const TEST_BACKEND: TestBackend = backendFromEnvironment();

/** The migrated database every test server's database is copied from. */
export const TEMPLATE_DATABASE = 'sessiondesk_template';

/**
 * A data directory's database: a server started again over the directory finds its data there.
 * The promise is kept, so that commands started at once over one directory share one database.
 */
const databaseByDataDir = new Map<string, Promise<string>>();

/** The database a test server over `dataDir` uses: a new one the first time. */
export function databaseFor(dataDir: string): Promise<string> {
  const known = databaseByDataDir.get(dataDir);
  if (known) return known;
  const made = newDatabase();
  databaseByDataDir.set(dataDir, made);
  // A failed creation is not kept: the next call tries again.
  made.catch(() => databaseByDataDir.delete(dataDir));
  return made;
}

async function newDatabase(): Promise<string> {
  const maintenanceUrl = inject('postgresTestCluster');
  if (!maintenanceUrl) {
    throw new Error(
      'PostgreSQL test servers run through vitest.postgres.config.ts (npm run test:postgres), ' +
        'whose global setup starts the cluster they share.',
    );
  }
  // Worker processes run one file after another: a counter would start again in each file.
  const name = `server_${randomBytes(8).toString('hex')}`;
  const sql = await connect(maintenanceUrl, { max: 1 });
  try {
    await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  } finally {
    await sql.end();
  }
  const url = new URL(maintenanceUrl);
  url.pathname = `/${name}`;
  return url.href;
}
