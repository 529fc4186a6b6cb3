import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { Store } from '../../src-main/store/store.js';
import { connect } from '../../src-main/store-postgres/connect.js';
import { migratePostgres } from '../../src-main/store-postgres/migrations.js';
import { str } from '../../src-main/store/row.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

/** A column as both databases can describe it. */
interface Column {
  type: string;
  notNull: boolean;
}
interface Schema {
  tables: Map<string, Map<string, Column>>;
  indexes: Set<string>;
}

/**
 * What PostgreSQL has that sql.js has not, on purpose. Each entry is a decision, with its reason;
 * anything else that differs is a step translated wrong.
 */
const ONLY_ON_POSTGRES: Record<string, string> = {
  // sql.js keeps transcripts in files beside the database; PostgreSQL keeps their bytes in rows
  // (src-main/store-postgres/README.md says why).
  transcript_chunks: 'transcripts are stored in the database, not in files',
  // The desktop is one process and counts failed sign-ins in memory; a team server's processes
  // share their counts (src-main/store-postgres/failure-windows.ts).
  failure_windows: 'failure limits are shared by the processes of a team server',
  // The desktop's one process keeps its setup code in memory; a team server's processes accept
  // each other's (src-main/store-postgres/setup-codes.ts).
  setup_codes: 'setup codes are accepted by every process of a team server',
  // sql.js's search index is SQLite FTS5 in search.db beside the store; PostgreSQL's is in the
  // database, written with each message (src-main/search/postgres-search-index.ts says why).
  search_pieces: 'the search index is in the database, not in search.db',
};

/** Columns and indexes PostgreSQL has on tables both have, on purpose, each with its reason. */
const COLUMNS_ONLY_ON_POSTGRES: Record<string, string> = {
  'sessions.search_indexed': "how many of the session's messages are in the search index, in the database",
};
const INDEXES_ONLY_ON_POSTGRES: Record<string, string> = {
  sessions_search_behind: 'the sessions the search index has not caught up with, found without a scan',
};

/**
 * Columns PostgreSQL has where SQLite lists by its rowid (the order rows were made in, which
 * created_at alone cannot tell within a millisecond): `made_order`, on each table listed by it.
 */
const ROWID_ON_POSTGRES = ['api_keys', 'approvals', 'memberships', 'users', 'workspaces'];

/** The PostgreSQL types a sql.js column type may become (src-main/store-postgres/migrations.ts). */
const TRANSLATIONS: Record<string, string[]> = {
  TEXT: ['text'],
  // Counts and positions stay 32-bit; bytes, offsets, tokens and epoch milliseconds are 64-bit;
  // the flags sql.js keeps as 0 and 1 (history_sources.paused, sessions.stopped) are booleans.
  INTEGER: ['integer', 'bigint', 'boolean'],
  REAL: ['double precision'],
};

/**
 * Columns whose sql.js values are not of their declared type, and the PostgreSQL type that
 * holds them as they are. Each entry is a decision, with its reason.
 */
const WIDER_ON_POSTGRES: Record<string, { type: string; why: string }> = {
  'history_files.mtime_ms': {
    type: 'double precision',
    why: "a file's mtime (fs.Stats.mtimeMs) has a fraction of a millisecond: REAL in SQLite's INTEGER column",
  },
};

/** The schema of a new data directory, made by the real store with its migrations. */
async function sqlJsSchema(): Promise<Schema> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sessiondesk-schema-'));
  const store = await Store.open({
    dataDir,
    clock: systemClock,
    logger: silentLogger,
    onProgress: () => undefined,
  });
  try {
    const tables = new Map<string, Map<string, Column>>();
    const names = store.db.all(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    );
    for (const [name] of names) {
      const columns = new Map<string, Column>();
      // table_info: cid, name, type, notnull, dflt_value, pk. A primary key's columns cannot
      // be null on PostgreSQL; SQLite only says so when NOT NULL is written out.
      for (const row of store.db.all(`PRAGMA table_info(${str(name)})`)) {
        columns.set(str(row[1]), { type: str(row[2]), notNull: row[3] === 1 || Number(row[5]) > 0 });
      }
      tables.set(str(name), columns);
    }
    // Indexes SQLite makes itself for UNIQUE and PRIMARY KEY have no SQL.
    const indexes = store.db.all("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL");
    return { tables, indexes: new Set(indexes.map(([name]) => str(name))) };
  } finally {
    await store.close({ snapshot: false });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('the schema on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();

  async function postgresSchema(): Promise<Schema> {
    const sql = await connect(pg.url(), { max: 1 });
    try {
      await migratePostgres(sql, { now: () => new Date() });
      const tables = new Map<string, Map<string, Column>>();
      const columns = await sql<
        { table_name: string; column_name: string; data_type: string; is_nullable: string }[]
      >`
        SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
      for (const c of columns) {
        const table = tables.get(c.table_name) ?? new Map<string, Column>();
        table.set(c.column_name, { type: c.data_type, notNull: c.is_nullable === 'NO' });
        tables.set(c.table_name, table);
      }
      // Those behind PRIMARY KEY and UNIQUE constraints are the constraints', as in SQLite.
      const indexes = await sql<{ name: string; table: string }[]>`
        SELECT indexname AS name, tablename AS table FROM pg_indexes i WHERE schemaname = 'public'
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`;
      return {
        tables,
        indexes: new Set(indexes.filter((i) => !(i.table in ONLY_ON_POSTGRES)).map((i) => i.name)),
      };
    } finally {
      await sql.end();
    }
  }

  it('has every table, column and index the sql.js schema has, and only what it says why', async () => {
    const [lite, post] = await Promise.all([sqlJsSchema(), postgresSchema()]);

    const onlyOnPostgres = [...post.tables.keys()].filter((t) => !lite.tables.has(t));
    expect(onlyOnPostgres.sort()).toEqual(Object.keys(ONLY_ON_POSTGRES).sort());
    expect([...lite.tables.keys()].filter((t) => !post.tables.has(t))).toEqual([]);
    expect(lite.tables.size).toBeGreaterThan(15);

    for (const [table, liteColumns] of lite.tables) {
      const postColumns = post.tables.get(table);
      const rowid = ROWID_ON_POSTGRES.includes(table) ? ['made_order'] : [];
      const own = Object.keys(COLUMNS_ONLY_ON_POSTGRES)
        .filter((column) => column.startsWith(`${table}.`))
        .map((column) => column.slice(table.length + 1));
      expect([...(postColumns?.keys() ?? [])].sort(), table).toEqual(
        [...liteColumns.keys(), ...rowid, ...own].sort(),
      );
      if (rowid.length > 0) expect(postColumns?.get('made_order')).toEqual({ type: 'bigint', notNull: true });
      for (const [name, column] of liteColumns) {
        const translated = postColumns?.get(name);
        const wider = WIDER_ON_POSTGRES[`${table}.${name}`];
        const allowed = wider ? [wider.type] : TRANSLATIONS[column.type];
        expect(allowed, `${table}.${name} ${column.type}`).toContain(translated?.type);
        expect(translated?.notNull, `${table}.${name} NOT NULL`).toBe(column.notNull);
      }
    }
    for (const column of Object.keys(WIDER_ON_POSTGRES)) {
      const [table = '', name = ''] = column.split('.');
      expect(lite.tables.get(table)?.has(name), `${column} is a sql.js column`).toBe(true);
    }
    // Tables of PostgreSQL's own have indexes of their own.
    expect([...post.indexes].sort()).toEqual(
      [...lite.indexes, ...Object.keys(INDEXES_ONLY_ON_POSTGRES)].sort(),
    );
  });
});
