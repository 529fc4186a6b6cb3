import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  connect,
  DatabaseUnreachableError,
  DatabaseUrlError,
  parseDatabaseUrl,
} from '../../src-main/store-postgres/connect.js';
import { ROOT } from '../helpers/cli.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

/** A port on 127.0.0.1 that nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function failureOf(url: string): Promise<Error> {
  const failure = await connect(url, { connectTimeoutSeconds: 5 }).then(
    async (sql) => {
      await sql.end();
      throw new Error(`connected to ${url}`);
    },
    (err: unknown) => err as Error,
  );
  return failure;
}

const STACK_LINE = /\n\s+at /;

describe('connecting to PostgreSQL', () => {
  it('says, for a database nothing listens for, where it looked and what to check, without a stack', async () => {
    const port = await closedPort();
    const err = await failureOf(`postgres://team:s3cret-pass@127.0.0.1:${port}/sessiondesk`);

    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect(err.message).toBe(
      `Cannot connect to the PostgreSQL database "sessiondesk" at 127.0.0.1:${port} as "team": nothing is ` +
        `listening there (connection refused). Check that PostgreSQL is running (pg_isready -h 127.0.0.1 ` +
        `-p ${port}) and that the URL given with --database or SESSIONDESK_DATABASE_URL names the right host and port.`,
    );
    expect(err.message).not.toMatch(STACK_LINE);
    expect(err.message).not.toContain('s3cret-pass');
    expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('gives up on a server that takes the connection and never answers, saying so', async () => {
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const started = performance.now();
      const err = await connect(`postgres://team@127.0.0.1:${port}/sessiondesk`, {
        connectTimeoutSeconds: 1,
      }).then(
        () => new Error('connected to a server that never answers'),
        (failure: unknown) => failure as Error,
      );
      expect(err).toBeInstanceOf(DatabaseUnreachableError);
      expect(err.message).toBe(
        `Cannot connect to the PostgreSQL database "sessiondesk" at 127.0.0.1:${port} as "team": no answer ` +
          `within 1 s. Check that the host is up and that no firewall drops connections to port ${port}.`,
      );
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('refuses a URL that is not a PostgreSQL one before connecting', () => {
    expect(() => parseDatabaseUrl('mysql://db.example.com/sessiondesk')).toThrow(DatabaseUrlError);
    expect(() => parseDatabaseUrl('mysql://db.example.com/sessiondesk')).toThrow(
      'The database URL must start with postgres:// (it starts with mysql://). Give one like postgres://sessiondesk@db.example.com:5432/sessiondesk.',
    );
    expect(() => parseDatabaseUrl('db.example.com:5432')).toThrow(DatabaseUrlError);
    expect(parseDatabaseUrl('postgresql://ann:pw@[::1]:6543/team%20db')).toEqual({
      host: '::1',
      port: 6543,
      database: 'team db',
      user: 'ann',
    });
  });
});

describe('connecting to a running PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();

  it('says a database that does not exist is missing, and how to make it', async () => {
    const port = pg.cluster().port;
    const err = await failureOf(`postgres://postgres@127.0.0.1:${port}/no_such_db`);
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect(err.message).toBe(
      `Cannot connect to the PostgreSQL database "no_such_db" at 127.0.0.1:${port} as "postgres": there is ` +
        `no such database. Create it (createdb -h 127.0.0.1 -p ${port} no_such_db) or correct the URL given ` +
        'with --database or SESSIONDESK_DATABASE_URL.',
    );
  });

  it('answers on the URL the cluster gave, over 127.0.0.1 only', async () => {
    const sql = await connect(pg.url(), { max: 1 });
    try {
      const [row] = await sql<{ addr: string; version: string }[]>`
        SELECT host(inet_server_addr()) AS addr, current_setting('server_version_num') AS version`;
      expect(row?.addr).toBe('127.0.0.1');
      expect(Number(row?.version)).toBeGreaterThanOrEqual(150000);
      const [settings] = await sql<{ fsync: string; listen: string }[]>`
        SELECT current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen`;
      expect(settings).toEqual({ fsync: 'off', listen: '127.0.0.1' });
    } finally {
      await sql.end();
    }
  });

  // PostgreSQL compiles a statement whose plan costs more than jit_above_cost: a search's
  // generic plan does, and compiling it took 23 of a common search's 24 ms (bench/RESULTS.md).
  it("runs every connection without JIT compilation, the searches' with their own settings too", async () => {
    for (const options of [{ max: 1 }, { max: 1, settings: { statement_timeout: '1000' } }]) {
      const sql = await connect(pg.url(), options);
      try {
        const [row] = await sql<{ jit: string; timeout: string }[]>`
          SELECT current_setting('jit') AS jit, current_setting('statement_timeout') AS timeout`;
        expect(row?.jit).toBe('off');
        expect(row?.timeout).toBe(options.settings ? '1s' : '0');
      } finally {
        await sql.end();
      }
    }
  });
});

describe('scripts/postgres-cluster.sh', () => {
  it('removes nothing from a folder it did not make', () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-a-cluster-'));
    writeFileSync(join(dir, 'precious.txt'), 'keep me');
    try {
      const stop = spawnSync('sh', [join(ROOT, 'scripts', 'postgres-cluster.sh'), 'stop', dir], {
        encoding: 'utf8',
      });
      expect(stop.status).toBe(1);
      expect(stop.stderr).toContain('holds no cluster made by this script; nothing removed');
      expect(readdirSync(dir)).toEqual(['precious.txt']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('on a machine with PostgreSQL', requireTools(postgresTool()), () => {
    it('starts a cluster where Node is told to colour its output (FORCE_COLOR, as in a Playwright worker)', () => {
      const dir = mkdtempSync(join(tmpdir(), 'coloured-cluster-'));
      const script = (...args: string[]) =>
        spawnSync('sh', [join(ROOT, 'scripts', 'postgres-cluster.sh'), ...args], {
          encoding: 'utf8',
          env: { ...process.env, FORCE_COLOR: '1' },
        });
      try {
        const start = script('start', dir);
        expect(start.stderr).toBe('');
        expect(start.status).toBe(0);
        expect(start.stdout.trim()).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/u);
      } finally {
        script('stop', dir);
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });
});
