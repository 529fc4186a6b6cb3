import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { exportChunks } from '../../src-main/data/export.js';
import { ExportHeaderSchema, ExportSessionSchema } from '../../src-main/data/format.js';
import { Store } from '../../src-main/store/store.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { sessionLines, toVersion1 } from '../helpers/export-import.js';
import { KEY_PATTERN, cliIn, ok, useSandbox } from '../helpers/cli-extra.js';
import { FULL_TASKS, FULL_TRANSCRIPT, seedDataDir } from '../helpers/seed.js';
import { PASSWORD } from '../helpers/server.js';
import { readsOf, storageOf } from '../../src-main/store/sqljs-storage.js';

const sandbox = useSandbox();

/** A data directory with a user (by that email) owning one empty workspace. */
async function ownerWithWorkspace(dataDir: string, email: string): Promise<string> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email, name: 'Ada Lovelace', password: PASSWORD });
    return (await accounts.createWorkspace({ name: 'Target', ownerEmail: email })).organizationId;
  } finally {
    await store.close();
  }
}

/** The NDJSON export of a workspace, read in this process once no command holds the directory. */
async function exportInProcess(dataDir: string, organizationId: string): Promise<string> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of exportChunks(
      readsOf(store),
      organizationId,
      'ndjson',
      new Date().toISOString(),
    )) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await store.close({ snapshot: false });
  }
}

function parseExport(ndjson: string) {
  return {
    header: ExportHeaderSchema.parse(JSON.parse(ndjson.slice(0, ndjson.indexOf('\n')))),
    sessions: sessionLines(ndjson).map((session) => ExportSessionSchema.parse(session)),
  };
}

/** The sessions of an export as they must survive a round trip (author ids are per directory). */
function comparable(ndjson: string) {
  return parseExport(ndjson).sessions.map(({ author: { id: _id, ...author }, ...rest }) => ({
    ...rest,
    author,
  }));
}

/** Every file's name, size and modification time: what "changed nothing" means. */
function listing(dataDir: string): string[] {
  return readdirSync(dataDir)
    .sort()
    .map((name) => {
      const stats = statSync(join(dataDir, name));
      return `${name} ${stats.size} ${stats.mtimeMs}`;
    });
}

/**
 * doctor leaves every file as it was. A running server writes its search index in the
 * background meanwhile, so with one running the index's files are not compared.
 */
async function doctorChangesNothing(dataDir: string, ...args: string[]): Promise<CliResult> {
  const serverRunning = existsSync(join(dataDir, 'server.json'));
  const compared = () => listing(dataDir).filter((line) => !(serverRunning && line.startsWith('search.db')));
  const before = compared();
  const result = await cliIn(dataDir)('doctor', ...args);
  expect(compared()).toEqual(before);
  return result;
}

function flipByte(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
  writeFileSync(path, bytes);
}

describe('sessiondesk export', () => {
  it('streams NDJSON to stdout and JSON to a file, every line valid', async () => {
    const dataDir = sandbox.dataDir();
    const seed = await seedDataDir(dataDir);
    const cli = cliIn(dataDir);

    const ndjson = await ok(cli('export', '--workspace', seed.organizationId));
    const { header, sessions } = parseExport(ndjson);
    expect(header).toMatchObject({
      type: 'sessiondesk.export',
      version: 2,
      organizationId: seed.organizationId,
      workspace: { name: 'Acme' },
      sessionCount: 1,
    });
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      id: seed.transcriptSessionId,
      status: 'completed',
      author: { name: 'Ada Lovelace', email: seed.email },
      metadata: {
        repository: 'acme/web',
        branch: 'agent/fix-flaky-login-test',
        prNumber: 42,
        prStatus: 'open',
      },
      repoUrl: 'https://github.com/acme/web',
      baseBranch: 'main',
      messages: FULL_TRANSCRIPT,
      tasks: FULL_TASKS,
    });

    const file = join(sandbox.dataDir(), 'acme.json');
    const written = await ok(
      cli('export', '--workspace', seed.organizationId, '--format', 'json', '--output', file),
    );
    expect(written).toMatch(/^Exported org_\S+ to .*acme\.json \(\d+\.\d KiB\)\.$/u);
    const document = JSON.parse(readFileSync(file, 'utf8')) as { sessions: unknown[]; exportedAt: string };
    expect(ExportHeaderSchema.parse({ ...document, sessions: undefined }).organizationId).toBe(
      seed.organizationId,
    );
    expect(document.sessions.map((s) => ExportSessionSchema.parse(s))).toEqual(sessions);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const [missing, badFormat, unknown] = await Promise.all([
      cli('export'),
      cli('export', '--workspace', seed.organizationId, '--format', 'xml'),
      cli('export', '--workspace', 'org_nope', '--output', join(dataDir, 'x.ndjson')),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing --workspace[\s\S]*Usage: sessiondesk export/u);
    expect(badFormat.code).toBe(2);
    expect(unknown).toMatchObject({ code: 1, stderr: 'sessiondesk: Workspace org_nope not found\n' });
    expect(existsSync(join(dataDir, 'x.ndjson.tmp'))).toBe(false);
    expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);
  }, 90_000);
});

describe('sessiondesk import', () => {
  it('rebuilds an export in a fresh directory, adds nothing the second time, skips bad lines', async () => {
    const source = sandbox.dataDir();
    const target = sandbox.dataDir();
    const email = 'ada@example.test';
    const [seed, org] = await Promise.all([seedDataDir(source, email), ownerWithWorkspace(target, email)]);
    const ndjson = await exportInProcess(source, seed.organizationId);
    const cli = cliIn(target);
    const first = await runCli(['import', '--workspace', org, '--data-dir', target], {}, ndjson);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/^imported 1 session \(5 messages\), skipped 0\ninto org_/u);
    expect(comparable(await exportInProcess(target, org))).toEqual(comparable(ndjson));

    const file = join(sandbox.dataDir(), 'export.ndjson');
    writeFileSync(file, ndjson);
    const again = await ok(cli('import', '--workspace', org, '--input', file));
    expect(again).toMatch(/^imported 0 sessions \(0 messages\), 1 already present, skipped 0\n/u);
    expect(again).toContain('1 session already here (same id) were left as they were.');

    // Another export (version 1, a whole session per line), with new ids, and three bad lines:
    // the last with a message nested 6,000 levels deep, written as text (JSON.stringify gives up).
    const [header, line] = toVersion1(ndjson).split('\n') as [string, string];
    const session = JSON.parse(line) as { id: string; messages: Array<{ type: string }> };
    const fresh = (id: string) => JSON.stringify({ ...session, id });
    const broken = { ...session, id: 'ses_broken-000000000000000' };
    broken.messages = [{ type: 'robot' }];
    const deep = { ...session, id: 'ses_deep-00000000000000000', messageMeta: undefined };
    deep.messages = [
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: 'DEEP' }] },
      },
    ] as never;
    const deepLine = JSON.stringify(deep).replace('"DEEP"', `${'['.repeat(6000)}${']'.repeat(6000)}`);
    writeFileSync(
      file,
      [
        header,
        'not json at all',
        JSON.stringify(broken),
        deepLine,
        fresh('ses_fresh-0000000000000000'),
        '',
      ].join('\n'),
    );
    const mixed = await ok(cli('import', '--workspace', org, '--input', file));
    expect(mixed).toMatch(
      /^imported 1 session \(5 messages\), skipped 3:\n {2}line 2: not JSON .*\n {2}line 3: messages\.0.*\n {2}line 4: messages\.0: is nested more than 64 levels deep/u,
    );
    const list = await exportInProcess(target, org);
    expect(
      parseExport(list)
        .sessions.map((s) => s.id)
        .sort(),
    ).toEqual([seed.transcriptSessionId, 'ses_fresh-0000000000000000'].sort());

    writeFileSync(file, 'this is not an export\n');
    const [refused, noWorkspace, noFile] = await Promise.all([
      cli('import', '--workspace', org, '--input', file),
      cli('import', '--input', file),
      cli('import', '--workspace', org, '--input', join(target, 'nope')),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^sessiondesk: The input is not a Session Desk export/u);
    expect(noWorkspace.code).toBe(2);
    expect(noFile).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/Cannot read .*nope: ENOENT/u) as unknown,
    });
  }, 90_000);
});

describe('with a server running', () => {
  it('export, import and backup go through it; a restored backup serves everything', async () => {
    const dataDir = sandbox.dataDir();
    const other = sandbox.dataDir();
    const [seed, otherSeed] = await Promise.all([
      seedDataDir(dataDir),
      seedDataDir(other, 'grace@example.test'),
    ]);
    const otherExport = join(sandbox.dataDir(), 'other.ndjson');
    writeFileSync(otherExport, await exportInProcess(other, otherSeed.organizationId));

    // Request lines (which routes the commands took) are logged at debug.
    const serve = await sandbox.serve(dataDir, ['--log-level', 'debug']);
    const cli = cliIn(dataDir);
    // Doctor reads beside the server, without its lock and without changing a file.
    const doctor = await doctorChangesNothing(dataDir);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(`held by the running server (pid ${serve.child.pid})`);
    expect(doctor.stdout).toContain(`running at ${serve.url}`);

    const exported = parseExport(await ok(cli('export', '--workspace', seed.organizationId)));
    expect(exported.sessions.map((s) => s.id)).toEqual([seed.transcriptSessionId]);

    const imported = await ok(
      cli('import', '--workspace', seed.secondOrganizationId, '--input', otherExport),
    );
    expect(imported).toMatch(/^imported 1 session \(5 messages\), skipped 0\n/u);
    // The author (grace) has no account here: the owner (ada) gets the session.
    expect(imported).toContain(`attributed to the workspace owner ${seed.email}: grace@example.test (1)`);
    for (const route of ['/api/admin/export', '/api/admin/import']) expect(serve.stderr()).toContain(route);

    // The server sees the imported session at once.
    const key = await ok(cli('key', 'create', '--workspace', seed.secondOrganizationId));
    expect(key).toMatch(KEY_PATTERN);
    const listed = await fetch(`${serve.url}/api/sessions`, { headers: { 'x-api-key': key } });
    const body = ListSessionsResponseSchema.parse(await listed.json());
    expect(body.sessions.map((s) => s.id)).toEqual([otherSeed.transcriptSessionId]);
    expect(body.sessions[0]).toMatchObject({ messageCount: 5, author: { name: 'Ada Lovelace' } });

    const backup = join(sandbox.dataDir(), 'backup.tar');
    const backedUp = await ok(cli('backup', '--output', backup));
    expect(backedUp).toMatch(
      /^Backed up 2 workspaces, 1 user, 2 sessions, 10 messages to .*backup\.tar \(.*: the database and 2 transcripts; schema version \d+, integrity_check ok\)\.$/u,
    );
    expect(serve.stderr()).toContain('/api/admin/backup');
    expect(existsSync(`${backup}.tmp`)).toBe(false);
    // A tar archive that the system's tar lists and unpacks: the database and each transcript.
    const entries = execFileSync('tar', ['-tf', backup], { encoding: 'utf8' }).trim().split('\n');
    expect(entries[0]).toBe('sessiondesk.db');
    expect(entries.slice(1)).toHaveLength(2);
    for (const name of entries.slice(1)) expect(name).toMatch(/^transcripts\/ses_[\w-]{22}\.transcript$/u);
    const unpacked = join(sandbox.dataDir(), 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xf', backup, '-C', unpacked]);
    // Its database is one SQLite file that sql.js opens and SQLite finds sound.
    const SQL = await initSqlJs();
    const copy = new SQL.Database(readFileSync(join(unpacked, 'sessiondesk.db')));
    expect(copy.exec('PRAGMA integrity_check')[0]?.values).toEqual([['ok']]);
    expect(copy.exec('SELECT count(*) FROM sessions')[0]?.values).toEqual([[2]]);
    copy.close();

    const restoredDir = join(sandbox.dataDir(), 'restored');
    const [refused, restoring] = await Promise.all([
      cli('restore', '--input', backup),
      cliIn(restoredDir)('restore', '--input', backup),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not empty .*Restore into a new or empty directory/u);
    const restored = await ok(Promise.resolve(restoring));
    expect(restored).toContain('Restored 2 workspaces, 1 user, 2 sessions, 10 messages');
    expect(restored).toContain(`sessiondesk serve --data-dir "${restoredDir}"`);
    expect(serve.child.exitCode).toBeNull();
    expect(await serve.stop()).toBe(0);

    const check = await doctorChangesNothing(restoredDir);
    expect({ code: check.code, stdout: check.stdout }).toMatchObject({ code: 0 });
    expect(check.stdout).toContain('integrity_check ok');

    const again = await sandbox.serve(restoredDir);
    const after = await fetch(`${again.url}/api/sessions`, { headers: { 'x-api-key': key } });
    expect(after.status).toBe(200);
    expect(ListSessionsResponseSchema.parse(await after.json()).sessions.map((s) => s.id)).toEqual([
      otherSeed.transcriptSessionId,
    ]);
    const full = await fetch(`${again.url}/api/sessions/${seed.transcriptSessionId}?apiKey=${key}`);
    expect(full.status).toBe(403);
    expect(await again.stop()).toBe(0);
  }, 120_000);
});

describe('sessiondesk doctor', () => {
  it('says healthy (0), then names a torn tail, a damaged snapshot and a stale lock (1) with fixes', async () => {
    const dataDir = sandbox.dataDir();
    await seedDataDir(dataDir);
    const healthy = await doctorChangesNothing(dataDir);
    expect(healthy).toMatchObject({ code: 0, stderr: '' });
    expect(healthy.stdout).toMatch(/Snapshots +snapshot-000000000001\.db .* checksum ok {2}\(loaded\)/u);
    expect(healthy.stdout).toMatch(
      /Lock +free\nServer +not running\nSearch index +\S.*\n\nNo problems found\.\n$/u,
    );

    appendFileSync(join(dataDir, 'journal-000000000001.log'), Buffer.from([64, 0, 0, 0, 9, 9]));
    const torn = await doctorChangesNothing(dataDir);
    expect(torn.code).toBe(1);
    expect(torn.stdout).toContain(
      '1. journal-000000000001.log ends with 6 bytes that are not a complete record (torn record',
    );
    expect(torn.stdout).toContain('Fix: Start Session Desk once');

    flipByte(join(dataDir, 'snapshot-000000000001.db'), 2000);
    const damaged = await doctorChangesNothing(dataDir);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toContain('1. snapshot-000000000001.db is damaged: its checksum does not match.');
    expect(damaged.stdout).toContain('rebuilds the data from the journals, which reach back to the start');
    expect(damaged.stdout).toContain('1 user, 1 session, 5 messages');

    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(dataDir, 'sessiondesk.lock'), JSON.stringify({ pid: dead, startedAt: '' }));
    const stale = await doctorChangesNothing(dataDir, '--json');
    expect(stale.code).toBe(1);
    const report = JSON.parse(stale.stdout) as { problems: Array<{ subject: string; fix: string }> };
    expect(report.problems.map((p) => p.subject)).toEqual([
      'snapshot-000000000001.db',
      'journal-000000000001.log',
      'sessiondesk.lock',
    ]);
    expect(report.problems[2]?.fix).toMatch(/next server or command takes it over/u);

    const help = await cliIn(dataDir)('doctor', '--help');
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^Usage: sessiondesk doctor/u);
  }, 90_000);
});
