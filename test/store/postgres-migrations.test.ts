import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src-main/store-postgres/connect.js';
import {
  currentPostgresVersion,
  migratePostgres,
  POSTGRES_MIGRATIONS,
} from '../../src-main/store-postgres/migrations.js';
import { DatabaseTooNewError } from '../../src-main/store/errors.js';
import { MIGRATIONS } from '../../src-main/store/migrations.js';
import { useCleanups } from '../helpers/cleanups.js';
import { ROOT } from '../helpers/cli.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

const now = () => new Date('2026-11-26T12:00:00.000Z');
const ALL_VERSIONS = POSTGRES_MIGRATIONS.map((m) => m.version);

describe('the PostgreSQL migrations', () => {
  it('are the sql.js steps: the same versions and names, in the same order', () => {
    expect(POSTGRES_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(
      MIGRATIONS.map((m) => [m.version, m.name]),
    );
  });
});

describe('migrating a PostgreSQL database', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  const addCleanup = useCleanups();

  async function open(url: string) {
    const sql = await connect(url, { max: 2 });
    addCleanup(() => sql.end());
    return sql;
  }

  it('applies every step to an empty database, and nothing the second time', async () => {
    const sql = await open(await pg.freshDatabase());
    expect(await currentPostgresVersion(sql)).toBe(0);

    expect(await migratePostgres(sql, { now })).toEqual(ALL_VERSIONS);
    const recorded = await sql<{ version: number; name: string; applied_at: string }[]>`
      SELECT version, name, applied_at FROM schema_migrations ORDER BY version`;
    expect(recorded.map((r) => [r.version, r.name])).toEqual(
      POSTGRES_MIGRATIONS.map((m) => [m.version, m.name]),
    );
    expect(new Set(recorded.map((r) => r.applied_at))).toEqual(new Set([now().toISOString()]));

    expect(await migratePostgres(sql, { now })).toEqual([]);
    expect(await currentPostgresVersion(sql)).toBe(ALL_VERSIONS.at(-1));
    const [count] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM schema_migrations`;
    expect(count?.n).toBe(ALL_VERSIONS.length);
  });

  it('leaves a failed step unrecorded and undone, and applies the steps before it', async () => {
    const sql = await open(await pg.freshDatabase());
    const broken = [
      ...POSTGRES_MIGRATIONS.slice(0, 2),
      { version: 3, name: 'broken', sql: ['CREATE TABLE half_done (id TEXT)', 'SELECT no_such_function()'] },
    ];
    await expect(migratePostgres(sql, { now, migrations: broken })).rejects.toThrow(/no_such_function/);
    expect(await currentPostgresVersion(sql)).toBe(2);
    const [table] = await sql<{ t: string | null }[]>`SELECT to_regclass('half_done')::text AS t`;
    expect(table?.t).toBeNull();
  });

  it('refuses a database a newer Session Desk has migrated', async () => {
    const sql = await open(await pg.freshDatabase());
    await migratePostgres(sql, { now });
    await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', 'x')`;
    const failure = migratePostgres(sql, { now });
    await expect(failure).rejects.toBeInstanceOf(DatabaseTooNewError);
    const known = POSTGRES_MIGRATIONS.at(-1)!.version;
    await expect(failure).rejects.toThrow(`schema version 999, newer than this app knows (${known})`);
  });

  it('applies each step once when two processes migrate the same database at the same moment', async () => {
    const url = await pg.freshDatabase();
    const children = [startMigrator(url), startMigrator(url)];
    await Promise.all(children.map((c) => c.ready));
    for (const child of children) child.go();
    const results = await Promise.all(children.map((c) => c.done));

    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });
    const appliedBy = results.map((r) => r.applied);
    expect([...appliedBy.flat()].sort((a, b) => a - b)).toEqual(ALL_VERSIONS);

    const sql = await open(url);
    const rows = await sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`;
    expect(rows.map((r) => r.version)).toEqual(ALL_VERSIONS);
  }, 60_000);
});

interface MigratorResult {
  code: number | null;
  stderr: string;
  applied: number[];
}

/** test/helpers/postgres-migrate-child.ts in a process of its own, connected and waiting for `go`. */
function startMigrator(url: string): { ready: Promise<void>; go(): void; done: Promise<MigratorResult> } {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'run-ts.js'), 'test/helpers/postgres-migrate-child.ts', url],
    {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const done = new Promise<MigratorResult>((resolve) => {
    child.on('close', (code) => {
      markReady();
      const last = stdout.trim().split('\n').at(-1) ?? '';
      resolve({ code, stderr, applied: last.startsWith('[') ? (JSON.parse(last) as number[]) : [] });
    });
  });
  return { ready, go: () => child.stdin.write('go\n'), done };
}
