import { existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock, type Logger } from '../../src-main/clock.js';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';
import { DataDirLockedError, LOCK_FILE } from '../../src-main/store/lock.js';
import { DatabaseTooNewError } from '../../src-main/store/migrations.js';
import { DataDamagedError, Store, StoreUnavailableError } from '../../src-main/store/store.js';
import { UnjournalableWriteError, type Db } from '../../src-main/store/sqljs.js';
import { tempDir } from '../helpers/server.js';
import { recordingLogger } from '../helpers/store.js';

const dirs: string[] = [];
const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = tempDir('sessiondesk-store-');
  dirs.push(dir);
  return dir;
}

async function openStore(
  dataDir: string,
  extra: { files?: FileLayer; logger?: Logger; snapshotAfterBytes?: number } = {},
) {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger, ...extra });
  open.push(store);
  return store;
}

async function closeStore(store: Store, options?: { snapshot?: boolean }) {
  await store.close(options);
  open.splice(open.indexOf(store), 1);
}

const NOTES = 'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)';
function addNote(db: Db, id: number) {
  db.run(NOTES);
  db.run('INSERT INTO notes (id, body) VALUES (?, ?)', [id, `note ${id} ${'x'.repeat(id % 50)}`]);
}
function noteIds(store: Store): number[] {
  return store.db.all('SELECT id FROM notes ORDER BY id').map((r) => r[0] as number);
}
/** Waits until writing a note succeeds again: a store heals at the first write after the disk does. */
async function writesAgain(store: Store, id: number) {
  const tryWrite = () =>
    store
      .write((db) => addNote(db, id))
      .then(
        () => true,
        () => false,
      );
  await expect.poll(tryWrite).toBe(true);
}
const files = (dir: string) => readdirSync(dir).sort();
const journalOf = (dir: string) =>
  join(
    dir,
    files(dir)
      .filter((f) => /^journal-\d+\.log$/.test(f))
      .at(-1)!,
  );

describe('the store on disk', () => {
  it('keeps every acknowledged write across a restart, with or without a snapshot at close', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    for (let i = 1; i <= 20; i += 1) await store.write((db) => addNote(db, i));
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toHaveLength(20);
    await store.write((db) => addNote(db, 21));
    await closeStore(store);
    expect(files(dir)).toEqual(
      expect.arrayContaining(['snapshot-000000000001.db', 'snapshot-000000000001.json']),
    );
    store = await openStore(dir);
    expect(noteIds(store)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it('commits concurrent writes in groups, all of them durable', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.write((db) => addNote(db, i + 1))));
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toHaveLength(200);
  });

  it('a write that throws leaves nothing behind, in memory or in the journal', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await store.write((db) => addNote(db, 1));
    const size = store.status().journalBytes;
    await expect(
      store.write((db) => {
        addNote(db, 2);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(noteIds(store)).toEqual([1]);
    expect(store.status().journalBytes).toBe(size);
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1]);
  });

  it.each([
    ['a Uint8Array', new Uint8Array([1, 2, 3])],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['undefined', undefined],
    ['a bigint', 10n],
  ])('refuses %s as a parameter: it would not replay as written; nothing is applied', async (_, value) => {
    const dir = newDir();
    let store = await openStore(dir);
    const create = 'CREATE TABLE IF NOT EXISTS vals (id INTEGER PRIMARY KEY, v)';
    await store.write((db) => {
      db.run(create);
      db.run('INSERT INTO vals (id, v) VALUES (?, ?)', [1, 'one']);
    });
    const size = store.status().journalBytes;
    const rows = () => store.db.all('SELECT id, v FROM vals ORDER BY id');
    const error = await store
      .write((db) => {
        db.run('INSERT INTO vals (id, v) VALUES (?, ?)', [2, 'two']);
        db.run('INSERT INTO vals (id, v) VALUES (?, ?)', [3, value as never]);
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UnjournalableWriteError);
    expect((error as Error).message).toContain('INSERT INTO vals');
    expect((error as Error).message).toMatch(/^Parameter 2 of/u);
    expect(rows()).toEqual([[1, 'one']]);
    expect(store.status().journalBytes).toBe(size);
    // The store goes on: the next write is journaled and survives a restart.
    await store.write((db) => db.run('INSERT INTO vals (id, v) VALUES (?, ?)', [4, 'four']));
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(rows()).toEqual([
      [1, 'one'],
      [4, 'four'],
    ]);
  });

  // It builds 256 MiB of rows in sql.js, then opens the store again: half a minute when the
  // machine is busy with other tests, so it gets more than the default time.
  it(
    'refuses a write whose journal record would pass the 256 MiB a reader accepts; nothing is applied',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      let store = await openStore(dir);
      await store.write((db) => addNote(db, 1));
      const size = store.status().journalBytes;
      const big = 'x'.repeat(128 * 1024 * 1024);
      const error = await store
        .write((db) => {
          addNote(db, 2);
          db.run('INSERT INTO notes (id, body) VALUES (?, ?)', [3, big]);
          db.run('INSERT INTO notes (id, body) VALUES (?, ?)', [4, big]);
        })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(UnjournalableWriteError);
      expect((error as Error).message).toMatch(/256 MiB/u);
      expect(noteIds(store)).toEqual([1]);
      expect(store.status().journalBytes).toBe(size);
      await store.write((db) => addNote(db, 5));
      await closeStore(store, { snapshot: false });
      store = await openStore(dir);
      expect(noteIds(store)).toEqual([1, 5]);
    },
  );

  it('refuses writes that bypass store.write()', async () => {
    const store = await openStore(newDir());
    expect(() => store.db.run('CREATE TABLE t (a)')).toThrow(/outside Store.write/);
  });

  it('recovers from a torn journal tail at every byte of the last record', async () => {
    const template = newDir();
    let store = await openStore(template);
    for (let i = 1; i <= 5; i += 1) await store.write((db) => addNote(db, i));
    const sizeBefore = store.status().journalBytes;
    await store.write((db) => addNote(db, 6));
    const sizeAfter = store.status().journalBytes;
    await closeStore(store, { snapshot: false });
    const journalName = files(template).find((f) => f.startsWith('journal-'))!;
    const bytes = readFileSync(join(template, journalName));

    for (let cut = sizeBefore + 1; cut < sizeAfter; cut += 7) {
      const dir = newDir();
      writeFileSync(join(dir, journalName), bytes.subarray(0, cut));
      const logger = recordingLogger();
      store = await openStore(dir, { logger });
      expect(noteIds(store)).toEqual([1, 2, 3, 4, 5]);
      expect(logger.lines.some((l) => l.startsWith('warn') && l.includes(journalName))).toBe(true);
      expect(files(dir).some((f) => f.startsWith(`${journalName}.cut-`))).toBe(true);
      // Appends continue after the intact part.
      await store.write((db) => addNote(db, 7));
      await closeStore(store, { snapshot: false });
      store = await openStore(dir);
      expect(noteIds(store)).toEqual([1, 2, 3, 4, 5, 7]);
      await closeStore(store);
    }
  });

  it('a flipped byte in the last record drops that record only', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    for (let i = 1; i <= 4; i += 1) await store.write((db) => addNote(db, i));
    await closeStore(store, { snapshot: false });
    const path = journalOf(dir);
    const bytes = readFileSync(path);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 3) ^ 0xff, bytes.length - 3);
    writeFileSync(path, bytes);
    const logger = recordingLogger();
    store = await openStore(dir, { logger });
    expect(noteIds(store)).toEqual([1, 2, 3]);
    expect(logger.lines.join('\n')).toMatch(/checksum mismatch/);
  });

  it('a damaged newest snapshot is kept aside and rebuilt from the one before it', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await store.write((db) => addNote(db, 1));
    await store.snapshot();
    await store.write((db) => addNote(db, 2));
    await store.snapshot();
    await store.write((db) => addNote(db, 3));
    await closeStore(store, { snapshot: false });
    const newest = join(dir, 'snapshot-000000000002.db');
    const bytes = readFileSync(newest);
    const middle = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(middle) ^ 0x01, middle);
    writeFileSync(newest, bytes);

    const logger = recordingLogger();
    store = await openStore(dir, { logger });
    expect(noteIds(store)).toEqual([1, 2, 3]);
    expect(logger.lines.some((l) => l.startsWith('error') && l.includes('snapshot-000000000002.db'))).toBe(
      true,
    );
    expect(files(dir).some((f) => f.startsWith('snapshot-000000000002.db.damaged-'))).toBe(true);
  });

  it('a zero-length or garbage snapshot with nothing to fall back on is a clear error, never an empty database', async () => {
    for (const damage of [Buffer.alloc(0), Buffer.from('this is not a database at all')]) {
      const dir = newDir();
      const store = await openStore(dir);
      await store.write((db) => addNote(db, 1));
      await store.snapshot();
      await store.write((db) => addNote(db, 2));
      await store.snapshot();
      await closeStore(store, { snapshot: false });
      for (const name of ['snapshot-000000000001.db', 'snapshot-000000000002.db'])
        writeFileSync(join(dir, name), damage);
      const error = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DataDamagedError);
      expect((error as Error).message).toContain(dir);
      expect(files(dir).filter((f) => f.includes('.damaged-'))).toHaveLength(2);
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    }
  });

  it('removes a temp file left by an interrupted snapshot', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await store.write((db) => addNote(db, 1));
    await closeStore(store, { snapshot: false });
    writeFileSync(join(dir, 'snapshot-000000000001.db.tmp'), 'half a snapshot');
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1]);
    expect(files(dir).some((f) => f.endsWith('.tmp'))).toBe(false);
  });

  it("removes only the store's own temp files, never other programs' ones", async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await store.write((db) => addNote(db, 1));
    await closeStore(store, { snapshot: false });
    const others = ['server.json.tmp', 'window-state.json.tmp', 'notes.tmp', 'snapshot-latest.db.tmp'];
    for (const name of others) writeFileSync(join(dir, name), 'not the store');
    const own = [
      'snapshot-000000000002.db.tmp',
      'snapshot-000000000002.json.tmp',
      'journal-000000000001.log.cut-1700000000000.tmp',
    ];
    for (const name of own) writeFileSync(join(dir, name), 'half written');
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1]);
    expect(files(dir).filter((f) => f.endsWith('.tmp'))).toEqual([...others].sort());
    for (const name of others) expect(readFileSync(join(dir, name), 'utf8')).toBe('not the store');
  });

  it('one process per data directory; a stale lock is taken over', async () => {
    const dir = newDir();
    const store = await openStore(dir);
    await expect(
      Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger }),
    ).rejects.toBeInstanceOf(DataDirLockedError);
    await closeStore(store);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 12345, startedAt: 'then' }));
    const again = await openStore(dir);
    expect(again.status().dataDir).toBe(dir);
    await closeStore(again);
    writeFileSync(join(dir, LOCK_FILE), '{"pid":');
    await closeStore(await openStore(dir));
  });

  it('refuses a database from a newer version of the app', async () => {
    const dir = newDir();
    const store = await openStore(dir);
    await store.write((db) =>
      db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')"),
    );
    await closeStore(store);
    await expect(
      Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger }),
    ).rejects.toBeInstanceOf(DatabaseTooNewError);
  });

  it('snapshots once the journal passes its limit, keeping two generations', async () => {
    const dir = newDir();
    let store = await openStore(dir, { snapshotAfterBytes: 4096 });
    for (let i = 1; i <= 200; i += 1) await store.write((db) => addNote(db, i));
    await expect.poll(() => store.status().generation).toBeGreaterThan(2);
    await closeStore(store, { snapshot: false });
    const snapshots = files(dir).filter((f) => /^snapshot-\d+\.db$/.test(f));
    expect(snapshots).toHaveLength(2);
    store = await openStore(dir);
    expect(noteIds(store)).toHaveLength(200);
  });

  it('counts journals left by a failed snapshot toward the next one, so their replay is not repeated', async () => {
    const dir = newDir();
    let failSnapshots = true;
    const failing: FileLayer = {
      ...realFiles,
      async rename(from, to) {
        if (failSnapshots && /snapshot-\d+\.db$/.test(to)) throw new Error('EIO: injected');
        return realFiles.rename(from, to);
      },
    };
    let store = await openStore(dir, { files: failing });
    for (let i = 1; i <= 100; i += 1) await store.write((db) => addNote(db, i));
    await expect(store.snapshot()).rejects.toThrow(/injected/);
    await store.write((db) => addNote(db, 101));
    await closeStore(store, { snapshot: false });
    failSnapshots = false;
    // Generation 1 failed: journal-0 (100 notes) and journal-1 (one note) are both replayed.
    const older = readFileSync(join(dir, 'journal-000000000000.log')).length;
    const active = readFileSync(join(dir, 'journal-000000000001.log')).length;
    expect(older).toBeGreaterThan(active * 10);

    // A limit the active journal alone is far from: the older one counts, so the next write snapshots.
    store = await openStore(dir, { snapshotAfterBytes: Math.round(older / 2) });
    expect(store.status().generation).toBe(1);
    await store.write((db) => addNote(db, 102));
    await expect.poll(() => store.status().generation).toBe(2);
    await closeStore(store, { snapshot: false });
    // The failed snapshot's checksum file is gone with it; the next open starts from snapshot 2.
    expect(files(dir)).not.toContain('snapshot-000000000001.json');
    store = await openStore(dir);
    expect(store.status().generation).toBe(2);
    expect(noteIds(store)).toHaveLength(102);
  });

  it('a disk error fails the write with 503-class errors, keeps reads going, and heals when the disk does', async () => {
    const dir = newDir();
    let failing = false;
    const faulty: FileLayer = {
      ...realFiles,
      async datasync(handle) {
        if (failing) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        return realFiles.datasync(handle);
      },
    };
    let store = await openStore(dir, { files: faulty });
    await store.write((db) => addNote(db, 1));
    failing = true;
    const failed = await store.write((db) => addNote(db, 2)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toContain('ENOSPC');
    // Reads go on, and show only what is on disk once the store has reloaded.
    await expect.poll(() => noteIds(store)).toEqual([1]);
    await expect(store.write((db) => addNote(db, 3))).rejects.toBeInstanceOf(Error);
    failing = false;
    await writesAgain(store, 4);
    expect(noteIds(store)).toEqual([1, 4]);
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1, 4]);
  });
});

describe('a reload from disk that fails too', () => {
  it('is tried again at the next write, so memory never keeps a write the disk refused', async () => {
    const dir = newDir();
    let failWrites = false;
    let failReads = false;
    const eio = () => Object.assign(new Error('i/o error'), { code: 'EIO' });
    const faulty: FileLayer = {
      ...realFiles,
      async datasync(handle) {
        if (failWrites) throw eio();
        return realFiles.datasync(handle);
      },
      async readdir(path) {
        if (failReads) throw eio();
        return realFiles.readdir(path);
      },
    };
    let store = await openStore(dir, { files: faulty });
    await store.write((db) => addNote(db, 1));
    failWrites = true;
    failReads = true;
    // The journal write fails, and so does the reload from disk that follows it.
    await expect(store.write((db) => addNote(db, 2))).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect.poll(() => store.status().recovering).toBe(false);
    failWrites = false;
    failReads = false;
    // The disk works again: the next write reloads first, so note 2 is gone and note 3 is kept.
    await writesAgain(store, 3);
    expect(noteIds(store)).toEqual([1, 3]);
    await store.write((db) => addNote(db, 4));
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1, 3, 4]);
  });
});

describe('torn journal header', () => {
  it('a journal cut inside its header is restarted, and the snapshot before it is kept', async () => {
    const dir = newDir();
    let store = await openStore(dir);
    await store.write((db) => addNote(db, 1));
    await closeStore(store);
    truncateSync(journalOf(dir), 3);
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1]);
    await store.write((db) => addNote(db, 2));
    await closeStore(store, { snapshot: false });
    store = await openStore(dir);
    expect(noteIds(store)).toEqual([1, 2]);
  });
});
