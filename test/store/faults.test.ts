import { cpSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ErrorResponseSchema } from '../../src-shared/index.js';
import { silentLogger, systemClock, type Logger } from '../../src-main/clock.js';
import { LOCK_FILE } from '../../src-main/store/lock.js';
import type { Db } from '../../src-main/store/sqljs.js';
import { realFiles } from '../../src-main/store/file-layer.js';
import { Store, StoreUnavailableError } from '../../src-main/store/store.js';
import { ERRNOS, faultyFiles, type FaultRule, type FaultyFiles } from '../helpers/faulty-files.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { recordingLogger } from '../helpers/store.js';

/**
 * Disk faults, injected through the store's FileLayer: for each place a write can fail and
 * each errno a disk gives, the failing operation is refused, reads go on, what is on disk
 * stays intact (a copy of the directory taken at that moment opens with exactly the
 * acknowledged writes), and the store works again once the disk does.
 */

const dirs: string[] = [];
const open: Store[] = [];
const servers: TestServer[] = [];
let scenarios = 0;
const injectedBy: FaultyFiles[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
  for (const store of open.splice(0)) await store.close({ snapshot: false }).catch(() => undefined);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
afterAll(() => {
  const injected = injectedBy.reduce((n, f) => n + f.injected, 0);
  console.log(`disk faults: ${scenarios} scenarios run, ${injected} failing file operations injected`);
});

function newDir(): string {
  const dir = tempDir('sessiondesk-faults-');
  dirs.push(dir);
  return dir;
}

function newFaultyFiles(): FaultyFiles {
  const files = faultyFiles();
  injectedBy.push(files);
  return files;
}

async function openStore(
  dataDir: string,
  extra: { files?: FaultyFiles; logger?: Logger; snapshotAfterBytes?: number } = {},
): Promise<Store> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger, ...extra });
  open.push(store);
  return store;
}

async function closeStore(store: Store, options?: { snapshot?: boolean }): Promise<void> {
  await store.close(options);
  open.splice(open.indexOf(store), 1);
}

const NOTES = 'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)';
const addNote = (db: Db, id: number) => {
  db.run(NOTES);
  db.run('INSERT INTO notes (id, body) VALUES (?, ?)', [id, `note ${id} ${'x'.repeat(id % 40)}`]);
};
const noteIds = (store: Store) =>
  store.db.all('SELECT id FROM notes ORDER BY id').map((row) => row[0] as number);
const listing = (dir: string) => readdirSync(dir).sort();

/** Writes notes, remembering which ones the store acknowledged. */
function notebook(store: Store) {
  const acked: number[] = [];
  let next = 1;
  return {
    acked,
    /** Resolves with the error when the write is refused. */
    async add(): Promise<unknown> {
      const id = next;
      next += 1;
      try {
        await store.write((db) => addNote(db, id));
        acked.push(id);
        return null;
      } catch (err) {
        return err;
      }
    },
    async addOk(): Promise<void> {
      const err = await this.add();
      if (err) throw err;
    },
  };
}

/**
 * What a crash right now would leave: the directory is copied as it is (without the lock,
 * whose pid is this live process) and opened by a fresh store without faults.
 */
async function crashImage(dir: string): Promise<{ ids: number[]; integrity: unknown; log: string[] }> {
  const copy = newDir();
  cpSync(dir, copy, { recursive: true, filter: (src) => !src.endsWith(LOCK_FILE) });
  const logger = recordingLogger();
  const store = await Store.open({ dataDir: copy, clock: systemClock, logger });
  try {
    const hasNotes = store.db.first("SELECT name FROM sqlite_master WHERE name = 'notes'") !== null;
    return {
      ids: hasNotes ? noteIds(store) : [],
      integrity: store.db.first('PRAGMA integrity_check')?.[0],
      log: logger.lines,
    };
  } finally {
    await store.close({ snapshot: false });
  }
}

async function expectIntactOnDisk(dir: string, acked: number[]): Promise<void> {
  const image = await crashImage(dir);
  expect(image.integrity).toBe('ok');
  expect(image.ids).toEqual(acked);
}

async function reopenAndCheck(dir: string, acked: number[]): Promise<void> {
  const store = await openStore(dir);
  expect(store.db.first('PRAGMA integrity_check')?.[0]).toBe('ok');
  expect(noteIds(store)).toEqual(acked);
  await closeStore(store, { snapshot: false });
}

const JOURNAL = /journal-\d{12}\.log$/u;
const SNAPSHOT_DB_TMP = /snapshot-\d{12}\.db\.tmp$/u;
const SNAPSHOT_META_TMP = /snapshot-\d{12}\.json\.tmp$/u;
const SNAPSHOT_DB = /snapshot-\d{12}\.db$/u;

type Fault = Omit<FaultRule, 'code'>;

/** Faults that hit the write being acknowledged: it fails, and the store reloads from disk. */
const WRITE_FAULTS: { name: string; fault: Fault }[] = [
  { name: 'journal append write', fault: { op: 'write', path: JOURNAL } },
  { name: 'journal append write, half written', fault: { op: 'write', path: JOURNAL, partial: true } },
  { name: 'journal fsync', fault: { op: 'datasync', path: JOURNAL } },
];

/** Faults that hit a snapshot: it fails, the journal keeps every write, writes go on. */
const SNAPSHOT_FAULTS: { name: string; fault: Fault }[] = [
  { name: 'journal creation for a new generation', fault: { op: 'open', path: JOURNAL, flags: 'wx' } },
  { name: 'directory fsync of the new journal', fault: { op: 'syncDirOf', path: JOURNAL } },
  { name: 'snapshot checksum file write', fault: { op: 'write', path: SNAPSHOT_META_TMP } },
  { name: 'snapshot temp write', fault: { op: 'write', path: SNAPSHOT_DB_TMP } },
  { name: 'snapshot fsync', fault: { op: 'datasync', path: SNAPSHOT_DB_TMP } },
  { name: 'snapshot rename', fault: { op: 'rename', path: SNAPSHOT_DB_TMP } },
  { name: 'directory fsync after the snapshot rename', fault: { op: 'syncDirOf', path: SNAPSHOT_DB } },
];

const cases = <T extends { name: string }>(faults: T[]) =>
  faults.flatMap((f) => ERRNOS.map((code) => ({ ...f, code, label: `${f.name}: ${code}` })));

describe('a failing journal write', () => {
  it.each(cases(WRITE_FAULTS))(
    '$label fails the write, keeps reads and the disk intact, and heals',
    async ({ fault, code }) => {
      scenarios += 1;
      const dir = newDir();
      const files = newFaultyFiles();
      const logger = recordingLogger();
      const store = await openStore(dir, { files, logger });
      const notes = notebook(store);
      for (let i = 0; i < 3; i += 1) await notes.addOk();

      files.fail({ ...fault, code });
      const failed = await notes.add();
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((failed as Error).message).toContain(code);
      // Reads go on, and never show the refused write: memory was reloaded from disk first.
      expect(noteIds(store)).toEqual(notes.acked);
      expect(logger.lines.some((l) => l.startsWith('error') && l.includes(code))).toBe(true);
      // While the disk refuses, every write is refused; none is half-applied.
      expect(await notes.add()).toBeInstanceOf(StoreUnavailableError);
      expect(noteIds(store)).toEqual(notes.acked);
      await files.idle();
      await expectIntactOnDisk(dir, notes.acked);

      files.clear();
      expect(await notes.add()).toBeNull();
      expect(noteIds(store)).toEqual(notes.acked);
      await notes.addOk();
      // The snapshot at close works too, and leaves no temp file.
      await closeStore(store);
      expect(listing(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      await reopenAndCheck(dir, notes.acked);
    },
  );

  it.each(ERRNOS)(
    'a disk that fails writes, fsyncs and truncates (%s) leaves a torn tail that is cut on recovery',
    async (code) => {
      scenarios += 1;
      const dir = newDir();
      const files = newFaultyFiles();
      const logger = recordingLogger();
      const store = await openStore(dir, { files, logger });
      const notes = notebook(store);
      for (let i = 0; i < 3; i += 1) await notes.addOk();

      files.fail({ op: ['write', 'datasync', 'truncate'], path: JOURNAL, code, partial: true });
      expect(await notes.add()).toBeInstanceOf(StoreUnavailableError);
      expect(noteIds(store)).toEqual(notes.acked);
      // Memory cannot be made to match a journal it cannot cut: writes stay refused.
      expect(await notes.add()).toBeInstanceOf(StoreUnavailableError);
      await files.idle();
      const image = await crashImage(dir);
      expect(image.integrity).toBe('ok');
      expect(image.ids).toEqual(notes.acked);
      expect(image.log.some((l) => l.startsWith('warn') && /journal-\d{12}\.log: torn record/u.test(l))).toBe(
        true,
      );

      files.clear();
      expect(await notes.add()).toBeNull();
      expect(noteIds(store)).toEqual(notes.acked);
      await closeStore(store, { snapshot: false });
      await reopenAndCheck(dir, notes.acked);
    },
  );
});

describe('a failing snapshot', () => {
  it.each(cases(SNAPSHOT_FAULTS))(
    '$label fails the snapshot only: writes go on, the previous generation stays usable',
    async ({ fault, code }) => {
      scenarios += 1;
      const dir = newDir();
      const files = newFaultyFiles();
      const logger = recordingLogger();
      const store = await openStore(dir, { files, logger });
      const notes = notebook(store);
      await notes.addOk();
      await notes.addOk();
      await store.snapshot();
      await notes.addOk();
      const generation = store.status().generation;

      files.fail({ ...fault, code });
      const failed = await store.snapshot().catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(Error);
      expect(String((failed as Error).message)).toContain(code);
      expect(files.injected).toBeGreaterThan(0);
      // The journal still takes every write, while the disk refuses snapshots.
      await notes.addOk();
      await notes.addOk();
      expect(noteIds(store)).toEqual(notes.acked);
      expect(store.status().generation).toBeGreaterThanOrEqual(generation);
      await files.idle();
      expect(listing(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      const image = await crashImage(dir);
      expect(image.integrity).toBe('ok');
      expect(image.ids).toEqual(notes.acked);
      expect(image.log.filter((l) => !l.startsWith('info'))).toEqual([]);

      files.clear();
      const taken = await store.snapshot();
      expect(taken.generation).toBeGreaterThan(generation);
      await notes.addOk();
      await closeStore(store, { snapshot: false });
      await reopenAndCheck(dir, notes.acked);
    },
  );

  it.each(ERRNOS)(
    'automatic snapshots that keep failing (%s) lose no write, and succeed once the disk does',
    async (code) => {
      scenarios += 1;
      const dir = newDir();
      const files = newFaultyFiles();
      const logger = recordingLogger();
      const store = await openStore(dir, { files, logger, snapshotAfterBytes: 1024 });
      const notes = notebook(store);
      files.fail({ op: 'rename', path: SNAPSHOT_DB_TMP, code });
      for (let i = 0; i < 60; i += 1) await notes.addOk();
      await expect.poll(() => files.injected).toBeGreaterThan(0);
      await files.idle();
      expect(logger.lines.some((l) => l.startsWith('error') && l.includes(`Snapshot failed: ${code}`))).toBe(
        true,
      );
      await expectIntactOnDisk(dir, notes.acked);

      files.clear();
      const before = listing(dir).filter((f) => SNAPSHOT_DB.test(f));
      for (let i = 0; i < 60; i += 1) await notes.addOk();
      await expect.poll(() => listing(dir).filter((f) => SNAPSHOT_DB.test(f)).length).toBeGreaterThan(0);
      await files.idle();
      expect(listing(dir).filter((f) => SNAPSHOT_DB.test(f))).not.toEqual(before);
      await closeStore(store, { snapshot: false });
      await reopenAndCheck(dir, notes.acked);
    },
  );
});

describe('a snapshot racing a failing write', () => {
  it.each(ERRNOS)(
    'a write refused (%s) while a snapshot runs is in neither memory nor the snapshot',
    async (code) => {
      scenarios += 1;
      const dir = newDir();
      // Tells when the snapshot's new journal is in place: the next step of the snapshot
      // (unless it waits for the journal) is exporting memory.
      let newJournalReady!: () => void;
      const journalReady = new Promise<void>((resolve) => (newJournalReady = resolve));
      const files = faultyFiles({
        ...realFiles,
        async syncDirOf(path) {
          await realFiles.syncDirOf(path);
          if (/journal-000000000002\.log$/u.test(path)) newJournalReady();
        },
      });
      injectedBy.push(files);
      const store = await openStore(dir, { files });
      const notes = notebook(store);
      for (let i = 0; i < 3; i += 1) await notes.addOk();
      await store.snapshot();
      await notes.addOk();
      expect(store.status().generation).toBe(1);

      // The fsync of the next write's record stalls until the snapshot has begun, then fails.
      const stall = journalReady.then(() => new Promise((resolve) => setImmediate(resolve)));
      files.fail({ op: 'datasync', path: /journal-000000000001\.log$/u, code, until: stall });
      const refused = notes.add();
      const snapshot = store.snapshot().catch((err: unknown) => err);
      expect(await refused).toBeInstanceOf(StoreUnavailableError);
      await snapshot;
      expect(noteIds(store)).toEqual(notes.acked);
      await files.idle();
      expect(listing(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      await expectIntactOnDisk(dir, notes.acked);

      files.clear();
      await notes.addOk();
      await store.snapshot();
      await closeStore(store, { snapshot: false });
      await reopenAndCheck(dir, notes.acked);
    },
  );
});

describe('disk faults over HTTP', () => {
  async function serverWithFaults(snapshotAfterBytes?: number) {
    const files = newFaultyFiles();
    const logger = recordingLogger();
    const server = await startTestServer({
      store: { files, logger, ...(snapshotAfterBytes ? { snapshotAfterBytes } : {}) },
    });
    servers.push(server);
    const owner = await seedWorkspace(server);
    const session = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Keep me',
    });
    // The agent's first writes and the key's last-use time land before any fault is armed.
    await withKey(server, owner.apiKey, 'GET', '/api/sessions');
    await files.idle(50);
    return { server, files, logger, owner, session };
  }

  const titleOnDisk = async (dir: string, sessionId: string) => {
    const copy = newDir();
    cpSync(dir, copy, { recursive: true, filter: (src) => !src.endsWith(LOCK_FILE) });
    const store = await Store.open({ dataDir: copy, clock: systemClock, logger: silentLogger });
    try {
      expect(store.db.first('PRAGMA integrity_check')?.[0]).toBe('ok');
      return store.db.first('SELECT title FROM sessions WHERE id = ?', [sessionId])?.[0];
    } finally {
      await store.close({ snapshot: false });
    }
  };

  it('a refused journal write is a 503 in the error shape; reads go on; writes resume', async () => {
    const { server, files, owner, session } = await serverWithFaults();
    let title = 'Keep me';
    const path = `/api/sessions/${session.id}`;
    for (const { name, fault } of WRITE_FAULTS) {
      for (const code of ERRNOS) {
        scenarios += 1;
        files.fail({ ...fault, code });
        const patch = await withKey(server, owner.apiKey, 'PATCH', path, {
          title: `lost to ${name} ${code}`,
        });
        expect(patch.status).toBe(503);
        const body = ErrorResponseSchema.parse(await patch.json());
        expect(body.error.code).toBe('unavailable');
        expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/u);
        expect(JSON.stringify(body)).not.toMatch(new RegExp(`${code}|journal|injected|at \\w+ \\(`, 'u'));
        const create = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
          organizationId: owner.organizationId,
          initialMessage: 'Lost too',
        });
        expect(create.status).toBe(503);
        // Reads go on, and never show the refused writes.
        expect(await (await withKey(server, owner.apiKey, 'GET', path)).json()).toMatchObject({
          session: { title },
        });
        const list = (await (await withKey(server, owner.apiKey, 'GET', '/api/sessions')).json()) as {
          sessions: unknown[];
        };
        expect(list.sessions).toHaveLength(1);
        await files.idle();
        expect(await titleOnDisk(server.dataDir, session.id)).toBe(title);

        files.clear();
        const next = `after ${name} ${code}`;
        await expect
          .poll(async () => (await withKey(server, owner.apiKey, 'PATCH', path, { title: next })).status)
          .toBe(200);
        title = next;
      }
    }
    await server.stop();
    const reopened = await startTestServer({ dataDir: server.dataDir });
    servers.push(reopened);
    const after = await (await withKey(reopened, owner.apiKey, 'GET', path)).json();
    expect(after).toMatchObject({ session: { title } });
    const list = (await (await withKey(reopened, owner.apiKey, 'GET', '/api/sessions')).json()) as {
      sessions: unknown[];
    };
    expect(list.sessions).toHaveLength(1);
  });

  it('failing automatic snapshots never fail a request, and lose no acknowledged write', async () => {
    const { server, files, logger, owner, session } = await serverWithFaults(2048);
    const path = `/api/sessions/${session.id}`;
    let title = 'Keep me';
    let n = 0;
    const patch = async () => {
      n += 1;
      const next = `title ${n}`;
      const response = await withKey(server, owner.apiKey, 'PATCH', path, { title: next });
      expect(response.status).toBe(200);
      title = next;
    };
    for (const { fault } of SNAPSHOT_FAULTS) {
      for (const code of ERRNOS) {
        scenarios += 1;
        const before = files.injected;
        files.fail({ ...fault, code });
        for (let i = 0; i < 200 && files.injected === before; i += 1) await patch();
        expect(files.injected).toBeGreaterThan(before);
        expect((await withKey(server, owner.apiKey, 'GET', path)).status).toBe(200);
        await files.idle();
        expect(await titleOnDisk(server.dataDir, session.id)).toBe(title);
        files.clear();
        await patch();
      }
    }
    expect(logger.lines.some((l) => l.startsWith('error') && l.includes('Snapshot failed'))).toBe(true);
    await files.idle();
    await server.stop();
    const reopened = await startTestServer({ dataDir: server.dataDir });
    servers.push(reopened);
    expect(await (await withKey(reopened, owner.apiKey, 'GET', path)).json()).toMatchObject({
      session: { title },
    });
  });
});
