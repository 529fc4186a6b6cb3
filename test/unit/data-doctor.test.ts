import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { newId } from '../../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { runDoctor } from '../../src-main/data/doctor.js';
import { formatDoctorReport, type DoctorReport } from '../../src-main/data/doctor-report.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { transcriptPath } from '../../src-main/store/transcripts.js';
import { tempDir } from '../helpers/server.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const SNAPSHOT_1 = 'snapshot-000000000001.db';
const SNAPSHOT_2 = 'snapshot-000000000002.db';
const JOURNAL_1 = 'journal-000000000001.log';
const JOURNAL_2 = 'journal-000000000002.log';

/** Opens the directory, adds a workspace with a user, and closes it with a snapshot. */
async function addWorkspace(dataDir: string, snapshot = true): Promise<void> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  const repos = createRepositories(store.db);
  const email = `${newId('user')}@example.test`.toLowerCase();
  await store.write(() =>
    repos.users.insert({
      id: newId('user'),
      email,
      name: 'Ada',
      passwordHash: 'unused',
      createdAt: new Date().toISOString(),
    }),
  );
  await createAccounts(storageOf(store), systemClock).createWorkspace({ name: 'Acme', ownerEmail: email });
  await store.close({ snapshot });
}

/**
 * A data directory in generation 2: snapshots 1 and 2, journals 1 and 2, each holding
 * writes, as a server leaves it after two snapshots (journal 0 is removed by then).
 */
async function twoGenerations(): Promise<string> {
  const dataDir = tempDir('sessiondesk-doctor-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  await addWorkspace(dataDir);
  await addWorkspace(dataDir);
  await addWorkspace(dataDir, false);
  return dataDir;
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

async function doctor(dataDir: string): Promise<DoctorReport> {
  const before = listing(dataDir);
  const report = await runDoctor(dataDir);
  expect(listing(dataDir)).toEqual(before);
  return report;
}

function flipByte(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
  writeFileSync(path, bytes);
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid as number;
}

describe('doctor', () => {
  it('finds a healthy directory healthy, and describes it', async () => {
    const dataDir = await twoGenerations();
    expect(readdirSync(dataDir).sort()).toEqual([
      JOURNAL_1,
      JOURNAL_2,
      SNAPSHOT_1,
      'snapshot-000000000001.json',
      SNAPSHOT_2,
      'snapshot-000000000002.json',
    ]);
    const report = await doctor(dataDir);
    expect(report.problems).toEqual([]);
    expect(report.database).toMatchObject({
      snapshot: 2,
      journals: [{ generation: 2, records: 2 }],
      complete: true,
      facts: {
        integrity: ['ok'],
        foreignKeyViolations: 0,
        counts: { users: 3, workspaces: 3, sessions: 0 },
      },
    });
    expect(report.database?.facts.schemaVersion).toBe(report.database?.facts.knownVersion);
    expect(report.snapshots.map((s) => [s.name, s.status, s.loaded])).toEqual([
      [SNAPSHOT_2, 'ok', true],
      [SNAPSHOT_1, 'ok', false],
    ]);
    expect(report.journals.map((j) => [j.name, j.records, j.damage])).toEqual([
      [JOURNAL_1, 2, undefined],
      [JOURNAL_2, 2, undefined],
    ]);
    expect(report.lock).toEqual({ state: 'free' });
    expect(report.server).toEqual({ state: 'none' });
    const text = formatDoctorReport(report);
    expect(text).toContain('integrity_check ok');
    expect(text).toContain('3 workspaces, 3 users, 0 sessions, 0 messages');
    expect(text).toMatch(/No problems found\.$/u);
  });

  it('names a torn journal tail and its fix; the next start then agrees', async () => {
    const dataDir = await twoGenerations();
    appendFileSync(join(dataDir, JOURNAL_2), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5]));
    const report = await doctor(dataDir);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ subject: JOURNAL_2 });
    expect(report.problems[0]?.problem).toMatch(
      /ends with 9 bytes that are not a complete record \(torn record/u,
    );
    expect(report.problems[0]?.fix).toMatch(/cuts the tail .* No acknowledged write is lost/u);
    expect(report.database?.facts.counts.workspaces).toBe(3);

    // What doctor predicted is what a start does: the tail is cut, a copy kept aside.
    await addWorkspace(dataDir, false);
    const after = await doctor(dataDir);
    expect(after.problems).toEqual([]);
    expect(after.keptAside.map((k) => k.name)).toEqual([
      expect.stringMatching(/^journal-000000000002\.log\.cut-\d+$/u),
    ]);
    expect(after.notes.join('\n')).toMatch(/kept aside by an earlier recovery/u);
  });

  it('checks every transcript against the database: short, damaged, and longer than committed', async () => {
    const dataDir = await twoGenerations();
    const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
    const repos = createRepositories(store.db);
    const [user] = store.db.all('SELECT id FROM users LIMIT 1').map((r) => String(r[0]));
    const workspaceId = repos.workspaces.listForUser(user!)[0]!.organizationId;
    const ids = [newId('session'), newId('session'), newId('session')];
    for (const id of ids) {
      await store.write(() => {
        repos.sessions.insert({
          id,
          workspaceId,
          authorId: user!,
          title: 'Read the code',
          model: 'claude-opus-4-6',
          createdAt: new Date().toISOString(),
          baseBranch: 'main',
          initialMessage: 'Read the code',
        });
        repos.sessions.appendMessage(
          id,
          workspaceId,
          { type: 'assistant', message: { content: [{ type: 'text', text: 'Reading src/index.ts' }] } },
          null,
          new Date().toISOString(),
        );
      });
    }
    await store.close({ snapshot: false });
    expect((await doctor(dataDir)).problems).toEqual([]);

    const [short, damaged, longer] = ids.map((id) => transcriptPath(dataDir, id)) as [string, string, string];
    writeFileSync(short, readFileSync(short).subarray(0, 30));
    flipByte(damaged, statSync(damaged).size - 5);
    appendFileSync(longer, Buffer.from('never committed'));
    const report = await doctor(dataDir);
    expect(report.problems.map((p) => p.subject).sort()).toEqual([short, damaged].sort());
    expect(report.problems.find((p) => p.subject === short)?.problem).toMatch(
      /has 30 bytes; the database counts \d+/u,
    );
    expect(report.problems.find((p) => p.subject === damaged)?.problem).toMatch(
      /is damaged: checksum mismatch/u,
    );
    expect(report.notes.join('\n')).toMatch(/1 transcript ends in bytes of a write that never committed/u);
    expect(formatDoctorReport(report)).toContain(short);
  });

  it('names a damaged snapshot and says the data is rebuilt from the one before', async () => {
    const dataDir = await twoGenerations();
    flipByte(join(dataDir, SNAPSHOT_2), 5000);
    const report = await doctor(dataDir);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({
      subject: SNAPSHOT_2,
      problem: 'is damaged: its checksum does not match',
    });
    expect(report.problems[0]?.fix).toContain(
      `rebuilds the data from ${SNAPSHOT_1} and the journals after it`,
    );
    expect(report.database).toMatchObject({
      snapshot: 1,
      journals: [
        { generation: 1, records: 2 },
        { generation: 2, records: 2 },
      ],
      facts: { integrity: ['ok'], counts: { workspaces: 3 } },
    });
    expect(formatDoctorReport(report)).toContain(`${SNAPSHOT_2}  `);
  });

  it('says when the data cannot be rebuilt: a missing journal, or no snapshot and no start', async () => {
    const dataDir = await twoGenerations();
    flipByte(join(dataDir, SNAPSHOT_2), 100);
    unlinkSync(join(dataDir, JOURNAL_1));
    const missing = await doctor(dataDir);
    expect(missing.problems.map((p) => p.subject)).toEqual([SNAPSHOT_2, JOURNAL_1]);
    expect(missing.problems[1]?.problem).toMatch(/is missing/u);
    expect(missing.problems[1]?.fix).toMatch(/sessiondesk restore/u);
    expect(missing.database?.complete).toBe(false);

    flipByte(join(dataDir, SNAPSHOT_1), 100);
    const lost = await doctor(dataDir);
    expect(lost.database).toBeNull();
    expect(lost.problems.at(-1)?.problem).toMatch(/cannot be rebuilt/u);
  });

  it('names a damaged journal that later journals depend on', async () => {
    const dataDir = await twoGenerations();
    flipByte(join(dataDir, SNAPSHOT_2), 100);
    const journal = readFileSync(join(dataDir, JOURNAL_1));
    flipByte(join(dataDir, JOURNAL_1), journal.length - 3);
    const report = await doctor(dataDir);
    const problem = report.problems.find((p) => p.subject === JOURNAL_1);
    expect(problem?.problem).toMatch(/checksum mismatch.*cannot be replayed on top of it/u);
    // Snapshot 1, then journal 1's first record (a user), and nothing after the damage.
    expect(report.database?.facts.counts).toMatchObject({ users: 2, workspaces: 1 });
  });

  it('tells a stale lock and server.json from live ones', async () => {
    const dataDir = await twoGenerations();
    const pid = deadPid();
    writeFileSync(
      join(dataDir, 'sessiondesk.lock'),
      JSON.stringify({ pid, startedAt: new Date().toISOString() }),
    );
    writeFileSync(
      join(dataDir, 'server.json'),
      JSON.stringify({ url: 'http://127.0.0.1:1', host: '127.0.0.1', port: 1, pid, startedAt: '' }),
    );
    const stale = await doctor(dataDir);
    expect(stale.lock).toEqual({ state: 'stale', pid });
    expect(stale.problems.map((p) => p.subject)).toEqual(['sessiondesk.lock', 'server.json']);
    expect(stale.problems[0]?.problem).toContain(`names process ${pid}, which is not running`);
    expect(stale.problems[0]?.fix).toMatch(/next server or command takes it over/u);
    expect(stale.problems[1]?.fix).toMatch(/Start the server again/u);

    // A live process holding the lock is not a problem (here: another command at work).
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    cleanups.push(() => holder.kill('SIGKILL'));
    writeFileSync(join(dataDir, 'sessiondesk.lock'), JSON.stringify({ pid: holder.pid, startedAt: '' }));
    unlinkSync(join(dataDir, 'server.json'));
    const live = await doctor(dataDir);
    expect(live.lock).toEqual({ state: 'held', pid: holder.pid, byServer: false });
    expect(live.problems).toEqual([]);
    expect(formatDoctorReport(live)).toContain(`held by process ${holder.pid}`);
  });

  it('reports a directory that does not exist, or holds nothing yet', async () => {
    const dataDir = tempDir('sessiondesk-doctor-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const empty = await doctor(dataDir);
    expect(empty.problems).toEqual([]);
    expect(empty.notes).toEqual(['There is no database here yet: the first start creates it.']);

    const missing = await runDoctor(join(dataDir, 'nope'));
    expect(missing.exists).toBe(false);
    expect(missing.problems[0]?.problem).toBe('does not exist');
  });
});
