import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';

/**
 * The two PostgreSQL drivers weighed by bench/postgres-drivers.ts, each behind the same small
 * interface and each used the way its own documentation shows: node-postgres (`pg`) with its
 * Pool, named prepared statements and a client checked out for a transaction; postgres.js with
 * its tagged templates (prepared by default), `sql.begin` and `sql.listen`. postgres.js is the
 * project's driver; `pg` is not a project dependency: it is installed into PG_BENCH_DEPS
 * (default under the temporary folder) on first use, and typed here by what the bench calls.
 */
const depsDir = process.env.PG_BENCH_DEPS ?? join(tmpdir(), 'sessiondesk-postgres-bench-deps');

interface PgQueryable {
  query(
    query: string | { name: string; text: string; values: unknown[] },
    values?: unknown[],
  ): Promise<{ rows: unknown[] }>;
}
interface PgPoolClient extends PgQueryable {
  release(): void;
}
interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  on(event: 'error', listener: (err: Error) => void): void;
  end(): Promise<void>;
}
interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'notification', listener: (message: { payload?: string }) => void): void;
  end(): Promise<void>;
}
interface PgModule {
  Pool: new (config: { connectionString: string; max: number }) => PgPool;
  Client: new (config: { connectionString: string }) => PgClient;
}

function loadPg(): PgModule {
  if (!existsSync(join(depsDir, 'node_modules', 'pg'))) {
    mkdirSync(depsDir, { recursive: true });
    process.stderr.write(`installing pg into ${depsDir}\n`);
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', depsDir, 'pg@8'], {
      stdio: 'inherit',
    });
  }
  return createRequire(join(depsDir, 'package.json'))('pg') as PgModule;
}

export type DriverName = 'pg' | 'postgres.js';

export interface BenchRow {
  id: string;
  workspaceId: string;
  createdAt: string;
  title: string;
  body: Buffer;
  n: number;
}

export interface DriverUnderTest {
  name: DriverName;
  insertInTransaction(row: BenchRow): Promise<void>;
  /** One statement, the same text for both: a VALUES list of every row. */
  insertBatch(rows: BenchRow[]): Promise<void>;
  selectById(id: string): Promise<Record<string, unknown> | undefined>;
  /** The session list's keyset page: 50 rows older than a position. */
  page(workspaceId: string, before: { createdAt: string; id: string }): Promise<readonly unknown[]>;
  /** Subscribes on a connection of its own; `onPayload` hears every notification's payload. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  /** Connections the server holds for this database right now. */
  serverConnections(): Promise<number>;
  /** Errors the driver reported outside any query (a pool's idle client cut off, say). */
  backgroundErrors: string[];
  close(): Promise<void>;
}

export const SCHEMA = [
  `CREATE TABLE items (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    title TEXT NOT NULL,
    body BYTEA NOT NULL,
    n BIGINT NOT NULL
  )`,
  `CREATE INDEX items_page ON items (workspace_id, created_at DESC, id DESC)`,
];

const COLUMNS = 'id, workspace_id, created_at, title, body, n';
const INSERT_ONE = `INSERT INTO items (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`;
const SELECT_ONE = `SELECT ${COLUMNS} FROM items WHERE id = $1`;
const PAGE = `SELECT ${COLUMNS} FROM items WHERE workspace_id = $1 AND (created_at, id) < ($2, $3)
  ORDER BY created_at DESC, id DESC LIMIT 50`;
const CONNECTIONS = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()';

const values = (r: BenchRow) => [r.id, r.workspaceId, r.createdAt, r.title, r.body, r.n];

function batchStatement(rows: BenchRow[]): { text: string; params: unknown[] } {
  const tuples = rows.map(
    (_, i) => `($${i * 6 + 1}, $${i * 6 + 2}, $${i * 6 + 3}, $${i * 6 + 4}, $${i * 6 + 5}, $${i * 6 + 6})`,
  );
  return { text: `INSERT INTO items (${COLUMNS}) VALUES ${tuples.join(', ')}`, params: rows.flatMap(values) };
}

export async function openPg(url: string, max: number): Promise<DriverUnderTest> {
  const pg = loadPg();
  const pool = new pg.Pool({ connectionString: url, max });
  const backgroundErrors: string[] = [];
  // Without a listener, an idle client cut off by the server is an uncaught 'error': the process exits.
  pool.on('error', (err) => backgroundErrors.push(err.message));
  let listener: PgClient | undefined;
  await pool.query('SELECT 1');
  return {
    name: 'pg',
    backgroundErrors,
    async insertInTransaction(row) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query({ name: 'insert-one', text: INSERT_ONE, values: values(row) });
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async insertBatch(rows) {
      const { text, params } = batchStatement(rows);
      await pool.query(text, params);
    },
    async selectById(id) {
      const result = await pool.query({ name: 'select-one', text: SELECT_ONE, values: [id] });
      return result.rows[0] as Record<string, unknown> | undefined;
    },
    async page(workspaceId, before) {
      const result = await pool.query({
        name: 'page',
        text: PAGE,
        values: [workspaceId, before.createdAt, before.id],
      });
      return result.rows;
    },
    async listen(channel, onPayload) {
      listener = new pg.Client({ connectionString: url });
      listener.on('error', (err) => backgroundErrors.push(`listener: ${err.message}`));
      listener.on('notification', (message) => onPayload(message.payload ?? ''));
      await listener.connect();
      await listener.query(`LISTEN ${channel}`);
    },
    async notify(channel, payload) {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async serverConnections() {
      return ((await pool.query(CONNECTIONS)).rows[0] as { n: number }).n;
    },
    async close() {
      await listener?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

export async function openPostgresJs(url: string, max: number): Promise<DriverUnderTest> {
  const backgroundErrors: string[] = [];
  const sql = postgres(url, { max, onnotice: () => undefined });
  await sql`SELECT 1`;
  return {
    name: 'postgres.js',
    backgroundErrors,
    async insertInTransaction(row) {
      await sql.begin(
        (tx) => tx`INSERT INTO items (id, workspace_id, created_at, title, body, n)
        VALUES (${row.id}, ${row.workspaceId}, ${row.createdAt}, ${row.title}, ${row.body}, ${row.n})`,
      );
    },
    async insertBatch(rows) {
      const { text, params } = batchStatement(rows);
      await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
    },
    async selectById(id) {
      const rows = await sql`SELECT id, workspace_id, created_at, title, body, n FROM items WHERE id = ${id}`;
      return rows[0];
    },
    async page(workspaceId, before) {
      return sql`SELECT id, workspace_id, created_at, title, body, n FROM items
        WHERE workspace_id = ${workspaceId} AND (created_at, id) < (${before.createdAt}, ${before.id})
        ORDER BY created_at DESC, id DESC LIMIT 50`;
    },
    async listen(channel, onPayload) {
      await sql.listen(channel, onPayload);
    },
    async notify(channel, payload) {
      await sql.notify(channel, payload);
    },
    async serverConnections() {
      const [row] = await sql.unsafe<{ n: number }[]>(CONNECTIONS);
      return row?.n ?? 0;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
