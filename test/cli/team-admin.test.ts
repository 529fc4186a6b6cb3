// The account commands and the data commands given a team server's database (`--database`,
// SESSIONDESK_DATABASE_URL): the real CLI as a process against a real PostgreSQL, and a key it
// made used over HTTP on a `serve --database` process.
import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src-main/store-postgres/connect.js';
import { migratePostgres, POSTGRES_MIGRATIONS } from '../../src-main/store-postgres/migrations.js';
import { runCli } from '../helpers/cli.js';
import { KEY_PATTERN, ok, PASSWORD, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

const LATEST = POSTGRES_MIGRATIONS.at(-1)!.version;

describe('the command line on a team database', { ...requireTools(postgresTool()), timeout: 180_000 }, () => {
  const pg = usePostgres();
  const sandbox = useSandbox();

  it('makes accounts, workspaces, members and keys in PostgreSQL; a serve process takes the key', async () => {
    const database = await pg.freshDatabase();
    // A data directory that is not there: nothing may be made or read in it.
    const missingDir = `${sandbox.dataDir()}/never-made`;
    const cli = (...args: string[]) => runCli([...args, '--data-dir', missingDir, '--database', database]);

    // The first command migrates the empty database, as serve would.
    const ownerId = await ok(
      cli('user', 'create', '--email', 'lead@example.com', '--name', 'Lead', '--password', PASSWORD),
    );
    expect(ownerId).toMatch(/^usr_/u);
    await ok(cli('user', 'create', '--email', 'sam@example.com', '--name', 'Sam', '--password', PASSWORD));
    const org = await ok(cli('workspace', 'create', '--name', 'Team', '--owner', 'lead@example.com'));
    expect(await ok(cli('member', 'add', '--workspace', org, '--email', 'sam@example.com'))).toBe(
      `sam@example.com is now a member of ${org}`,
    );
    const users = JSON.parse(await ok(cli('user', 'list', '--json'))) as Array<{
      email: string;
      workspaces: number;
    }>;
    expect(users.map((u) => [u.email, u.workspaces])).toEqual([
      ['lead@example.com', 1],
      ['sam@example.com', 1],
    ]);
    const listed = await ok(cli('workspace', 'list'));
    expect(listed.split('\n')[1]).toMatch(
      new RegExp(`^${org}\\s+Team\\s+lead@example\\.com\\s+2\\s+0\\s`, 'u'),
    );
    expect(await ok(cli('member', 'remove', '--workspace', org, '--email', 'sam@example.com'))).toBe(
      `sam@example.com is no longer a member of ${org}`,
    );
    expect((await ok(cli('user', 'list'))).split('\n')).toHaveLength(3);

    const key = await ok(cli('key', 'create', '--workspace', org, '--name', 'script'));
    expect(key).toMatch(KEY_PATTERN);
    const other = await ok(cli('key', 'create', '--workspace', org, '--name', 'spare'));
    const keys = JSON.parse(await ok(cli('key', 'list', '--workspace', org, '--json'))) as Array<{
      id: string;
      label: string;
    }>;
    expect(keys.map((k) => k.label).sort()).toEqual(['script', 'spare']);
    const spare = keys.find((k) => k.label === 'spare')!;
    expect(await ok(cli('key', 'revoke', '--workspace', org, '--id', spare.id))).toBe(`Revoked ${spare.id}`);
    expect(await ok(cli('key', 'list', '--workspace', org))).not.toContain(spare.id);

    // The schema is this version's, and the local data directory was never made.
    const doctor = await runCli(['doctor', '--database', database]);
    expect(doctor, doctor.stderr).toMatchObject({ code: 0 });
    expect(doctor.stdout).toContain(`Schema version: ${LATEST} (this Session Desk knows ${LATEST})`);
    expect(doctor.stdout).toContain('Holds: 2 user(s), 1 workspace(s), 0 session(s)');
    // Debian's PostgreSQL is built with lz4, which the migrations ask for.
    expect(doctor.stdout).toContain('Transcripts: compressed with lz4');
    expect(existsSync(missingDir)).toBe(false);

    // A server on the same database takes the key made by the command line, and not the revoked one.
    const serve = await sandbox.serveWithEnv(['--port', '0', '--data-dir', sandbox.dataDir()], {
      SESSIONDESK_DATABASE_URL: database,
    });
    const sessions = (k: string) =>
      fetch(`${serve.url}/api/sessions?organizationId=${org}`, { headers: { 'x-api-key': k } });
    const answer = await sessions(key);
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(((await answer.json()) as { sessions: unknown[] }).sessions).toEqual([]);
    expect((await sessions(other)).status).toBe(401);
    // The people made by the command line sign in to it.
    expect(await signInAt(serve.url, 'lead@example.com')).toMatch(/^__session=/u);
    expect(await serve.stop()).toBe(0);
  });

  it('says what the data commands do with a team database, and never use the local data directory', async () => {
    const database = await pg.freshDatabase();
    const dataDir = sandbox.dataDir();
    const url = new URL(database);
    const target = `--host ${url.hostname} --port ${url.port} --username ${decodeURIComponent(url.username)}`;
    const dbName = url.pathname.slice(1);

    // Not migrated yet: doctor says so, and changes nothing.
    const fresh = await runCli(['doctor', '--json'], { SESSIONDESK_DATABASE_URL: database });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({
      schemaVersion: 0,
      knownVersion: LATEST,
      transcriptCompression: null,
      problems: [],
    });
    expect((await runCli(['doctor', '--database', database])).stdout).toContain(
      'holds no Session Desk schema yet',
    );

    const backup = await runCli(['backup', '--output', `${dataDir}/team.dump`, '--database', database]);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain(
      `pg_dump --format=custom --file ${dataDir}/team.dump ${target} ${dbName}`,
    );
    const restore = await runCli(['restore', '--input', `${dataDir}/team.dump`], {
      SESSIONDESK_DATABASE_URL: database,
    });
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain(
      `pg_restore --clean --if-exists --no-owner ${target} --dbname ${dbName} ${dataDir}/team.dump`,
    );
    for (const args of [
      ['history', 'import', '--workspace', 'Team'],
      ['push', '--to', 'http://127.0.0.1:1', '--key', 'sdk_x'],
      ['agent-command', 'set', 'tool', '--', '/bin/true'],
      ['acp-agent', 'list'],
      ['doctor', '--repair'],
    ]) {
      // The options go before a program's "--".
      const split = args.includes('--') ? args.indexOf('--') : args.length;
      const refused = await runCli([
        ...args.slice(0, split),
        '--data-dir',
        dataDir,
        '--database',
        database,
        ...args.slice(split),
      ]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(/database/u);
      expect(refused.stdout).toBe('');
    }
    // Nothing was made in the data directory, and the database is still empty.
    expect(readdirSync(dataDir)).toEqual([]);
    const after = JSON.parse((await runCli(['doctor', '--json', '--database', database])).stdout) as {
      schemaVersion: number;
    };
    expect(after.schemaVersion).toBe(0);
  });

  it('says when transcripts are not compressed with lz4, and why, without calling it a problem', async () => {
    const database = await pg.freshDatabase();
    const sql = await connect(database);
    try {
      // A database migrated by a version before lz4: the next serve asks for it.
      await migratePostgres(sql, { now: () => new Date(), migrations: POSTGRES_MIGRATIONS.slice(0, -1) });
      const older = await runCli(['doctor', '--database', database]);
      expect(older.code, older.stderr).toBe(0);
      expect(older.stdout).toContain(
        'Transcripts are compressed with pglz: the next "sessiondesk serve --database" compresses new ones with lz4',
      );
      // Migrated, but the column keeps pglz (as on a PostgreSQL built without lz4).
      await migratePostgres(sql, { now: () => new Date() });
      await sql`ALTER TABLE transcript_chunks ALTER COLUMN bytes SET COMPRESSION pglz`;
      const report = await runCli(['doctor', '--json', '--database', database]);
      expect(report.code, report.stderr).toBe(0);
      const parsed = JSON.parse(report.stdout) as { transcriptCompression: string; notes: string[] };
      expect(parsed.transcriptCompression).toBe('pglz');
      expect(parsed.notes.join('\n')).toContain('not lz4');
    } finally {
      await sql.end();
    }
  });

  it('refuses a URL that is not PostgreSQL’s (exit 2) and names a database it cannot reach (exit 1)', async () => {
    for (const args of [['user', 'list'], ['key', 'create', '--workspace', 'org_x'], ['doctor']]) {
      const wrong = await runCli([...args, '--database', 'mysql://db/x']);
      expect(wrong.code, args.join(' ')).toBe(2);
      expect(wrong.stderr).toContain('must start with postgres://');
      const unreachable = await runCli(args, {
        SESSIONDESK_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing',
      });
      expect(unreachable.code, args.join(' ')).toBe(1);
      expect(unreachable.stderr).toContain('"nothing" at 127.0.0.1:1');
      expect(unreachable.stderr).not.toContain('    at ');
    }
  });
});
