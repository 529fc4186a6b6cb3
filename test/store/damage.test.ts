import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { DataDirLockedError, LOCK_FILE } from '../../src-main/store/lock.js';
import type { Db } from '../../src-main/store/sqljs.js';
import { frameRecord } from '../../src-main/store/journal.js';
import { DataDamagedError, Store } from '../../src-main/store/store.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { recordingLogger } from '../helpers/store.js';

/**
 * Torn and damaged files in a data directory, and what opening it gives: the intact part
 * of the data, the damaged file kept aside, and a logged message naming it; or, when
 * nothing intact can rebuild the data, a DataDamagedError naming the directory. Never a
 * crash loop: opening a second time gives the same data (or the same error), and never a
 * silent empty database.
 */

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
let opened = 0;
afterAll(() => console.log(`damaged data directories: ${opened} opens checked`));

function newDir(): string {
  const dir = tempDir('sessiondesk-damage-');
  dirs.push(dir);
  return dir;
}

function copyOf(template: string): string {
  const dir = newDir();
  cpSync(template, dir, { recursive: true });
  return dir;
}

const NOTES = 'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)';
const addNote = (db: Db, id: number) => {
  db.run(NOTES);
  db.run('INSERT INTO notes (id, body) VALUES (?, ?)', [id, `note ${id} ${'x'.repeat((id * 7) % 30)}`]);
};
const listing = (dir: string) => readdirSync(dir).sort();
const pad = (g: number) => String(g).padStart(12, '0');
const journal = (g: number) => `journal-${pad(g)}.log`;
const snapshot = (g: number) => `snapshot-${pad(g)}.db`;
const sidecar = (g: number) => `snapshot-${pad(g)}.json`;

interface Opened {
  ids: number[];
  integrity: unknown;
  lines: string[];
  /** Lines at warn or error level. */
  problems: string[];
}

/**
 * Opens the directory, reads what it holds, and closes it again without a snapshot; with
 * `repair`, as `sessiondesk doctor --repair` opens it.
 */
async function openAndRead(
  dir: string,
  after?: (store: Store) => Promise<void>,
  options: { repair?: boolean } = {},
): Promise<Opened> {
  const logger = recordingLogger();
  opened += 1;
  const store = await Store.open({
    dataDir: dir,
    clock: systemClock,
    logger,
    cutDamagedJournals: options.repair ?? false,
  });
  try {
    const hasNotes = store.db.first("SELECT name FROM sqlite_master WHERE name = 'notes'") !== null;
    const result = {
      ids: hasNotes ? store.db.all('SELECT id FROM notes ORDER BY id').map((r) => r[0] as number) : [],
      integrity: store.db.first('PRAGMA integrity_check')?.[0],
      lines: logger.lines,
      problems: logger.lines.filter((l) => !l.startsWith('info')),
    };
    if (after) await after(store);
    return result;
  } finally {
    await store.close({ snapshot: false });
  }
}

/** The error opening gives, or a failure when it opens. */
async function openError(dir: string): Promise<{ error: Error; lines: string[] }> {
  const logger = recordingLogger();
  opened += 1;
  const result = await Store.open({ dataDir: dir, clock: systemClock, logger }).then(
    async (store) => {
      await store.close({ snapshot: false });
      return null;
    },
    (err: unknown) => err as Error,
  );
  if (result === null) throw new Error(`${dir} opened, but it should not have`);
  return { error: result, lines: logger.lines };
}

/**
 * Opens twice: the first open recovers, the second must find a healthy directory that
 * gives the same data without reporting anything again.
 */
async function openTwice(dir: string): Promise<Opened> {
  const first = await openAndRead(dir);
  expect(first.integrity).toBe('ok');
  const second = await openAndRead(dir);
  expect(second.ids).toEqual(first.ids);
  expect(second.integrity).toBe('ok');
  expect(second.problems).toEqual([]);
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  return first;
}

async function build(steps: (store: Store, note: (id: number) => Promise<void>) => Promise<void>) {
  const dir = newDir();
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
  await steps(store, (id) => store.write((db) => addNote(db, id)));
  await store.close({ snapshot: false });
  return dir;
}

/** Where each record of a journal file ends, read independently of the store's parser. */
function recordBounds(bytes: Buffer): { start: number; end: number }[] {
  const bounds: { start: number; end: number }[] = [];
  let offset = 8;
  while (offset < bytes.length) {
    const end = offset + 8 + bytes.readUInt32LE(offset);
    bounds.push({ start: offset, end });
    offset = end;
  }
  expect(offset).toBe(bytes.length);
  return bounds;
}

describe('a torn journal', () => {
  // Generation 1: a snapshot holding note 1, then a journal of six records (notes 2 to 7).
  let template: string;
  let bytes: Buffer;
  let bounds: { start: number; end: number }[];
  const RECORDS = 6;

  beforeAll(async () => {
    template = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      for (let id = 2; id <= RECORDS + 1; id += 1) await note(id);
    });
    bytes = readFileSync(join(template, journal(1)));
    bounds = recordBounds(bytes);
    expect(bounds).toHaveLength(RECORDS);
  });

  /** The notes a journal cut after `length` bytes still holds in whole records. */
  const expectedAt = (length: number) => [1, ...bounds.flatMap((b, i) => (b.end <= length ? [i + 2] : []))];

  async function cutAndOpen(length: number) {
    const dir = copyOf(template);
    writeFileSync(join(dir, journal(1)), bytes.subarray(0, length));
    const first = await openTwice(dir);
    expect(first.ids).toEqual(expectedAt(length));
    const atBoundary = length === 8 || bounds.some((b) => b.end === length);
    const cuts = listing(dir).filter((f) => f.startsWith(`${journal(1)}.cut-`));
    if (atBoundary) {
      // Nothing torn: nothing to report, nothing kept aside.
      expect(first.problems).toEqual([]);
      expect(cuts).toEqual([]);
    } else {
      expect(cuts).toHaveLength(1);
      // The copy kept aside is the file as it was found, torn tail included.
      expect(readFileSync(join(dir, cuts[0] as string))).toEqual(bytes.subarray(0, length));
      expect(first.problems).toHaveLength(1);
      const [message] = first.problems;
      expect(message).toMatch(/^warn /u);
      expect(message).toContain(join(dir, journal(1)));
      expect(message).toContain(cuts[0]);
      expect(message).toMatch(/torn (record header|record|header)/u);
    }
    return dir;
  }

  it('cut at every byte of its last record gives exactly the records before it', async () => {
    const last = bounds.at(-1)!;
    for (let length = last.start; length <= last.end; length += 1) await cutAndOpen(length);
  });

  it('cut at a sample of offsets across the whole file gives exactly the intact prefix', async () => {
    const offsets = new Set<number>([0, 1, 4, 7, 8, 9, 15, 16]);
    for (const b of bounds) for (const d of [-1, 0, 1, 4, 8, 9]) offsets.add(b.start + d);
    for (let o = 0; o < bytes.length; o += 23) offsets.add(o);
    const sample = [...offsets].filter((o) => o >= 0 && o <= bytes.length).sort((a, b) => a - b);
    expect(sample.length).toBeGreaterThan(50);
    for (const length of sample) await cutAndOpen(length);
  });

  it('after a cut, appends continue after the intact part and survive a restart', async () => {
    const dir = await cutAndOpen(bounds[3]!.start + 5);
    await openAndRead(dir, async (store) => {
      await store.write((db) => addNote(db, 100));
    });
    const again = await openTwice(dir);
    expect(again.ids).toEqual([...expectedAt(bounds[3]!.start), 100]);
  });
});

describe('a flipped byte in a journal', () => {
  let template: string;
  let bytes: Buffer;
  let bounds: { start: number; end: number }[];

  beforeAll(async () => {
    template = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      for (let id = 2; id <= 5; id += 1) await note(id);
    });
    bytes = readFileSync(join(template, journal(1)));
    bounds = recordBounds(bytes);
  });

  /**
   * Damage in the last record may be an append a crash cut off: it is cut, with a warning.
   * Damage with intact records after it stops the open and changes nothing; repairing
   * (doctor --repair) then keeps exactly the records before it. Returns what was logged.
   */
  async function flipAndOpen(offset: number, mask: number, keptRecords: number) {
    const dir = copyOf(template);
    const damaged = Buffer.from(bytes);
    damaged.writeUInt8(damaged.readUInt8(offset) ^ mask, offset);
    writeFileSync(join(dir, journal(1)), damaged);
    const inLastRecord = offset >= bounds.at(-1)!.start;
    let refusal = '';
    if (!inLastRecord) {
      const { error } = await openError(dir);
      expect(error).toBeInstanceOf(DataDamagedError);
      expect(error.message).toContain(join(dir, journal(1)));
      expect(error.message).toContain('sessiondesk doctor --repair');
      expect(readFileSync(join(dir, journal(1)))).toEqual(damaged);
      expect(listing(dir).filter((f) => f.includes('.cut-'))).toEqual([]);
      refusal = error.message;
    }
    const first = inLastRecord ? await openTwice(dir) : await openAndRead(dir, undefined, { repair: true });
    if (!inLastRecord) expect(await openTwice(dir)).toMatchObject({ ids: first.ids, problems: [] });
    expect(first.ids).toEqual([1, ...Array.from({ length: keptRecords }, (_, i) => i + 2)]);
    const cuts = listing(dir).filter((f) => f.startsWith(`${journal(1)}.cut-`));
    expect(cuts).toHaveLength(1);
    expect(readFileSync(join(dir, cuts[0] as string))).toEqual(damaged);
    expect(first.problems).toHaveLength(1);
    const message = first.problems[0]!;
    expect(message).toContain(join(dir, journal(1)));
    expect(message).toContain(cuts[0]);
    expect(message).toContain(`the ${keptRecords} records before it were recovered`);
    if (inLastRecord) expect(message).toMatch(/^warn /u);
    return `${refusal}\n${message}`;
  }

  it('in a record’s length, checksum or payload keeps exactly the records before that record (repairing, unless it is the last)', async () => {
    let checked = 0;
    for (const [k, { start, end }] of bounds.entries()) {
      const positions = [
        ...[0, 1, 2, 3].flatMap((i) => [
          { offset: start + i, mask: 0x01 },
          { offset: start + i, mask: 0xff },
        ]),
        ...[4, 5, 6, 7].map((i) => ({ offset: start + i, mask: 0x01 })),
        { offset: start + 8, mask: 0x01 },
        { offset: Math.floor((start + 8 + end) / 2), mask: 0x20 },
        { offset: end - 1, mask: 0x80 },
      ];
      for (const { offset, mask } of positions) {
        const message = await flipAndOpen(offset, mask, k);
        expect(message).toMatch(/(torn record|impossible record length|checksum mismatch) at byte \d+/u);
        expect(message).toContain(`at byte ${start}`);
        checked += 1;
      }
    }
    expect(checked).toBe(bounds.length * 15);
  });

  it('in its header stops the open; repairing keeps nothing of that journal, but the snapshot before it', async () => {
    for (let offset = 0; offset < 8; offset += 1) {
      const message = await flipAndOpen(offset, 0x01, 0);
      expect(message).toContain('not a journal file at byte 0');
    }
  });

  it('in an earlier journal stops the open; repairing keeps what is before it, and sets the later journals aside', async () => {
    // Snapshot 1 (note 1), journal 1 (notes 2, 3), snapshot 2 (damaged), journal 2 (note 4).
    const dir = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      await note(2);
      await note(3);
      await store.snapshot();
      await note(4);
    });
    writeFileSync(join(dir, snapshot(2)), 'not a database');
    const path = join(dir, journal(1));
    const original = readFileSync(path);
    const second = recordBounds(original)[1]!;
    original.writeUInt8(original.readUInt8(second.start + 10) ^ 0x01, second.start + 10);
    writeFileSync(path, original);

    const refused = await openError(dir);
    expect(refused.error).toBeInstanceOf(DataDamagedError);
    expect(refused.error.message).toContain(`${join(dir, journal(1))}: checksum mismatch`);
    expect(refused.error.message).toContain(journal(2));
    expect(listing(dir).filter((f) => f.includes('.cut-'))).toEqual([]);
    const first = await openAndRead(dir, undefined, { repair: true });
    expect(first.ids).toEqual([1, 2]);
    const text = [...refused.lines, ...first.problems].join('\n');
    expect(text).toMatch(new RegExp(`error .*${snapshot(2)}: is damaged`, 'u'));
    expect(text).toMatch(new RegExp(`error .*${journal(1)}: checksum mismatch .*cannot be replayed`, 'u'));
    expect(text).toMatch(new RegExp(`error .*${journal(2)}: follows a damaged journal`, 'u'));
    const names = listing(dir);
    expect(names.some((f) => f.startsWith(`${snapshot(2)}.damaged-`))).toBe(true);
    expect(names.some((f) => f.startsWith(`${journal(1)}.cut-`))).toBe(true);
    expect(names.some((f) => f.startsWith(`${journal(2)}.damaged-`))).toBe(true);

    // Writes and snapshots go on from there, never over the files kept aside.
    await openAndRead(dir, async (store) => {
      await store.write((db) => addNote(db, 5));
      await store.snapshot();
      await store.write((db) => addNote(db, 6));
    });
    expect((await openTwice(dir)).ids).toEqual([1, 2, 5, 6]);
  });
});

describe('a journal record that is intact but cannot be replayed', () => {
  /** Snapshot 1 (note 1), journal 1 (notes 2 to 5), with note 3's record replaced. */
  async function withUnreplayableRecord(): Promise<{ dir: string; damaged: Buffer }> {
    const dir = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      for (let id = 2; id <= 5; id += 1) await note(id);
    });
    const path = join(dir, journal(1));
    const bytes = readFileSync(path);
    const [, second] = recordBounds(bytes);
    // A checksum-valid record whose statement fails: a table that does not exist.
    const payload = Buffer.from(JSON.stringify([['INSERT INTO no_such_table (id) VALUES (?)', [3]]]));
    const damaged = Buffer.concat([
      bytes.subarray(0, second!.start),
      frameRecord(payload),
      bytes.subarray(second!.end),
    ]);
    writeFileSync(path, damaged);
    return { dir, damaged };
  }

  it('stops the open with a DataDamagedError pointing to doctor, and changes no file', async () => {
    const { dir, damaged } = await withUnreplayableRecord();
    const before = listing(dir);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { error } = await openError(dir);
      expect(error).toBeInstanceOf(DataDamagedError);
      expect(error.message).toContain(join(dir, journal(1)));
      expect(error.message).toContain('no_such_table');
      expect(error.message).toContain('sessiondesk doctor');
      // The acknowledged records after it (notes 4 and 5) are still there to be saved.
      expect(readFileSync(join(dir, journal(1)))).toEqual(damaged);
      expect(listing(dir)).toEqual(before);
    }
  });

  it('doctor reports it; doctor --repair keeps what is before it and the copy of the file', async () => {
    const { dir, damaged } = await withUnreplayableRecord();
    const report = await runCli(['doctor', '--data-dir', dir]);
    expect(report.code).toBe(1);
    expect(report.stdout).toContain(journal(1));
    expect(report.stdout).toContain('no_such_table');
    expect(report.stdout).toContain('doctor --repair');

    const repaired = await runCli(['doctor', '--repair', '--data-dir', dir]);
    expect(repaired.stderr).toContain(journal(1));
    expect(repaired.code).toBe(0);
    const cuts = listing(dir).filter((f) => f.startsWith(`${journal(1)}.cut-`));
    expect(cuts).toHaveLength(1);
    expect(readFileSync(join(dir, cuts[0]!))).toEqual(damaged);
    const after = await openTwice(dir);
    expect(after.ids).toEqual([1, 2]);
  });
});

describe('a damaged snapshot', () => {
  /** Snapshot 1 (note 1), journal 1 (notes 2, 3), snapshot 2 (notes 1 to 3), journal 2 (note 4). */
  let twoGenerations: string;
  /** Journal 0 (migrations, notes 1, 2), snapshot 1 (notes 1, 2), journal 1 (note 3). */
  let oneGeneration: string;

  beforeAll(async () => {
    twoGenerations = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      await note(2);
      await note(3);
      await store.snapshot();
      await note(4);
    });
    expect(listing(twoGenerations)).toEqual([
      journal(1),
      journal(2),
      snapshot(1),
      sidecar(1),
      snapshot(2),
      sidecar(2),
    ]);
    oneGeneration = await build(async (store, note) => {
      await note(1);
      await note(2);
      await store.snapshot();
      await note(3);
    });
    expect(listing(oneGeneration)).toEqual([journal(0), journal(1), snapshot(1), sidecar(1)]);
  });

  const DAMAGE: { name: string; apply: (dir: string, g: number) => void; why: RegExp }[] = [
    { name: 'zero-length', apply: (d, g) => writeFileSync(join(d, snapshot(g)), ''), why: /has 0 bytes/u },
    {
      name: 'garbage',
      apply: (d, g) => writeFileSync(join(d, snapshot(g)), 'SQLite format 3\0 and then garbage'.repeat(30)),
      why: /bytes, \d+ were written/u,
    },
    {
      name: 'flipped in the middle',
      apply: (d, g) => {
        const bytes = readFileSync(join(d, snapshot(g)));
        const middle = Math.floor(bytes.length / 2);
        bytes.writeUInt8(bytes.readUInt8(middle) ^ 0x04, middle);
        writeFileSync(join(d, snapshot(g)), bytes);
      },
      why: /checksum does not match/u,
    },
    {
      name: 'without its .json checksum file',
      apply: (d, g) => rmSync(join(d, sidecar(g))),
      why: /checksum file is missing/u,
    },
  ];

  function expectKeptAside(dir: string, generation: number, lines: string[], why: RegExp) {
    const aside = listing(dir).filter((f) => f.startsWith(`${snapshot(generation)}.damaged-`));
    expect(aside).toHaveLength(1);
    const message = lines.find((l) => l.startsWith('error') && l.includes(join(dir, snapshot(generation))));
    expect(message).toBeDefined();
    expect(message).toMatch(why);
    expect(message).toContain(aside[0]);
  }

  it.each(DAMAGE)('$name, the newest: rebuilt from the generation before it', async ({ apply, why }) => {
    const dir = copyOf(twoGenerations);
    apply(dir, 2);
    const first = await openTwice(dir);
    expect(first.ids).toEqual([1, 2, 3, 4]);
    expectKeptAside(dir, 2, first.lines, why);
  });

  it.each(DAMAGE)(
    '$name, the only one: rebuilt from the journals, which still reach back to the start',
    async ({ apply, why }) => {
      const dir = copyOf(oneGeneration);
      apply(dir, 1);
      const first = await openTwice(dir);
      expect(first.ids).toEqual([1, 2, 3]);
      expectKeptAside(dir, 1, first.lines, why);
    },
  );

  it.each(DAMAGE)(
    '$name, both generations: DataDamagedError naming the directory, at every start',
    async ({ apply }) => {
      const dir = copyOf(twoGenerations);
      apply(dir, 1);
      apply(dir, 2);
      const before = listing(dir).filter((f) => !f.includes('.damaged-'));
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const { error } = await openError(dir);
        expect(error).toBeInstanceOf(DataDamagedError);
        expect(error.message).toContain(dir);
        expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
        // Nothing new was started beside the damage: no fresh journal, no empty snapshot.
        expect(listing(dir).filter((f) => !f.includes('.damaged-'))).toEqual(
          before.filter((f) => !f.endsWith('.db')),
        );
      }
    },
  );

  it.each(DAMAGE)(
    '$name, with no journal at all beside it: DataDamagedError at every start, never an empty database',
    async ({ apply }) => {
      const dir = copyOf(oneGeneration);
      rmSync(join(dir, journal(0)));
      rmSync(join(dir, journal(1)));
      apply(dir, 1);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const { error } = await openError(dir);
        expect(error).toBeInstanceOf(DataDamagedError);
        expect(error.message).toContain(dir);
      }
    },
  );
});

describe('other leftovers in a data directory', () => {
  let template: string;
  beforeAll(async () => {
    template = await build(async (store, note) => {
      await note(1);
      await store.snapshot();
      await note(2);
      await note(3);
      await store.snapshot();
      await note(4);
    });
  });

  it('temp files of an interrupted snapshot are removed, with a warning naming each', async () => {
    const dir = copyOf(template);
    writeFileSync(join(dir, `${snapshot(3)}.tmp`), 'half a snapshot');
    writeFileSync(join(dir, `${sidecar(3)}.tmp`), '{"generation":3,');
    const first = await openTwice(dir);
    expect(first.ids).toEqual([1, 2, 3, 4]);
    expect(first.problems).toHaveLength(2);
    for (const name of [`${snapshot(3)}.tmp`, `${sidecar(3)}.tmp`]) {
      expect(first.problems.some((l) => l.startsWith('warn') && l.includes(join(dir, name)))).toBe(true);
    }
    expect(listing(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a journal missing in the middle of the chain is a DataDamagedError naming it, at every start', async () => {
    const dir = copyOf(template);
    // Rebuilding needs snapshot 1, journal 1 and journal 2; journal 1 is gone.
    writeFileSync(join(dir, snapshot(2)), '');
    rmSync(join(dir, journal(1)));
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { error } = await openError(dir);
      expect(error).toBeInstanceOf(DataDamagedError);
      expect(error.message).toContain(join(dir, journal(1)));
      expect(error.message).toMatch(/is missing/u);
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    }
  });

  it('journals that no longer reach back to the start, with no intact snapshot: DataDamagedError', async () => {
    const dir = copyOf(template);
    writeFileSync(join(dir, snapshot(2)), 'garbage');
    rmSync(join(dir, snapshot(1)));
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { error } = await openError(dir);
      expect(error).toBeInstanceOf(DataDamagedError);
      expect(error.message).toContain(dir);
    }
  });

  it('a journal missing after an intact snapshot is not needed: the snapshot has its writes', async () => {
    const dir = copyOf(template);
    rmSync(join(dir, journal(1)));
    expect((await openTwice(dir)).ids).toEqual([1, 2, 3, 4]);
  });

  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => child.on('exit', resolve));
    return child.pid!;
  }

  it.each([
    { name: 'a dead process', lock: async () => JSON.stringify({ pid: await deadPid(), startedAt: 'then' }) },
    { name: 'a pid beyond any', lock: async () => JSON.stringify({ pid: 2 ** 22 + 1, startedAt: 'then' }) },
    { name: 'garbage', lock: async () => '\u0000\u00ff{{not json' },
    { name: 'an empty file (a crash while writing it)', lock: async () => '' },
    { name: 'JSON without a pid', lock: async () => '{"startedAt":"then"}' },
  ])('a stale lock left by $name is taken over', async ({ lock }) => {
    const dir = copyOf(template);
    writeFileSync(join(dir, LOCK_FILE), await lock());
    expect((await openTwice(dir)).ids).toEqual([1, 2, 3, 4]);
  });

  it('a lock held by a live process is refused, and taken over once that process is gone', async () => {
    const dir = copyOf(template);
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: child.pid, startedAt: 'now' }));
      const { error } = await openError(dir);
      expect(error).toBeInstanceOf(DataDirLockedError);
      expect(error.message).toContain(dir);
      expect(error.message).toContain(String(child.pid));
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill();
      await exited;
    }
    expect((await openTwice(dir)).ids).toEqual([1, 2, 3, 4]);
  });
});
