import { cpSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { runDoctor } from '../../src-main/data/doctor.js';
import { realFiles } from '../../src-main/store/file-layer.js';
import { frameRecord, JOURNAL_MAGIC, parseJournal } from '../../src-main/store/journal.js';
import { readJournal } from '../../src-main/store/journal-reader.js';
import { journalName, snapshotMetaName, snapshotName } from '../../src-main/store/recovery-plan.js';
import type { Db } from '../../src-main/store/sqljs.js';
import { DataDamagedError, Store } from '../../src-main/store/store.js';
import { tempDir } from '../helpers/server.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function newDir(): string {
  const dir = tempDir('sessiondesk-plan-');
  dirs.push(dir);
  return dir;
}

describe('reading a journal in chunks', () => {
  /** Records of varied sizes, two of them larger than a chunk, about 3.5 MiB in all. */
  function journalBytes(): { bytes: Buffer; records: Buffer[] } {
    const records: Buffer[] = [];
    for (let i = 0; i < 400; i += 1) {
      const size = i === 150 || i === 151 ? 1_300_000 : 50 + ((i * 7919) % 4000);
      records.push(Buffer.from(JSON.stringify([[`-- ${i}`, ['x'.repeat(size)]]])));
    }
    return { bytes: Buffer.concat([JOURNAL_MAGIC, ...records.map(frameRecord)]), records };
  }

  /** Compared as bytes: a deep comparison of megabytes, element by element, takes minutes. */
  const same = (a: Buffer[], b: Buffer[]) =>
    a.length === b.length && Buffer.concat(a).equals(Buffer.concat(b));

  async function both(bytes: Buffer) {
    const dir = newDir();
    const path = join(dir, 'journal.log');
    writeFileSync(path, bytes);
    const seen: Buffer[] = [];
    const scan = await readJournal(realFiles, path, (records) => {
      seen.push(...records.map((r) => Buffer.from(r)));
      return { applied: records.length };
    });
    return { scan, seen, parsed: parseJournal(bytes) };
  }

  it('finds what reading the whole file finds, wherever it is cut or damaged', async () => {
    const { bytes, records } = journalBytes();
    const intact = await both(bytes);
    expect(intact.scan).toEqual({ size: bytes.length, records: records.length, intactLength: bytes.length });
    expect(same(intact.seen, records)).toBe(true);

    const MiB = 1024 * 1024;
    const offsets = [
      7,
      8,
      9,
      100,
      MiB - 3,
      MiB,
      MiB + 5,
      2 * MiB + 17,
      3 * MiB,
      bytes.length - 9,
      bytes.length - 1,
    ];
    for (const offset of offsets) {
      const cut = bytes.subarray(0, offset);
      const flipped = Buffer.from(bytes);
      flipped[offset] = (flipped[offset] ?? 0) ^ 0xff;
      const zeroed = Buffer.concat([bytes.subarray(0, offset), Buffer.alloc(5000)]);
      for (const damaged of [cut, flipped, zeroed]) {
        const { scan, seen, parsed } = await both(damaged);
        expect({
          offset,
          records: scan.records,
          intactLength: scan.intactLength,
          damage: scan.damage,
        }).toEqual({
          offset,
          records: parsed.records.length,
          intactLength: parsed.intactLength,
          damage: parsed.damage,
        });
        expect(same(seen, parsed.records), `records read before byte ${offset}`).toBe(true);
      }
    }
  }, 240_000);

  it('stops at a record that cannot be applied, and never calls that damage a torn tail', async () => {
    const { bytes, records } = journalBytes();
    const dir = newDir();
    const path = join(dir, 'journal.log');
    writeFileSync(path, bytes);
    let applied = 0;
    const scan = await readJournal(realFiles, path, (batch) => {
      const room = 200 - applied;
      if (batch.length < room) {
        applied += batch.length;
        return { applied: batch.length };
      }
      applied += room;
      return { applied: room, error: new Error('no such table: nowhere') };
    });
    const offset = 8 + records.slice(0, 200).reduce((n, r) => n + 8 + r.length, 0);
    expect(scan).toEqual({
      size: bytes.length,
      records: 200,
      intactLength: offset,
      damage: {
        offset,
        reason: 'a record could not be replayed (no such table: nowhere)',
        bytes: bytes.length - offset,
        torn: false,
      },
    });
  });
});

describe('doctor and the store follow one recovery plan', () => {
  /** One write: a workspace, which doctor counts among its facts. */
  const addWorkspace = (db: Db, id: number) =>
    db.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', [
      `org_${String(id).padStart(22, '0')}`,
      `Workspace ${id}`,
      new Date().toISOString(),
    ]);

  /** Generations 1 and 2 (snapshots and journals), workspaces 1 to 9 spread over them. */
  async function template(): Promise<string> {
    const dir = newDir();
    const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
    const note = (id: number) => store.write((db) => addWorkspace(db, id));
    for (let id = 1; id <= 3; id += 1) await note(id);
    await store.snapshot();
    for (let id = 4; id <= 6; id += 1) await note(id);
    await store.snapshot();
    for (let id = 7; id <= 9; id += 1) await note(id);
    await store.close({ snapshot: false });
    return dir;
  }

  const flip = (path: string, at: (size: number) => number) => {
    const bytes = readFileSync(path);
    const offset = at(bytes.length);
    bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
  };
  const truncate = (path: string, by: number) => {
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - by));
  };
  /** Drops snapshot 2, so snapshot 1 is loaded and journals 1 and 2 are replayed. */
  const onlySnapshot1 = (dir: string) => {
    unlinkSync(join(dir, snapshotName(2)));
    unlinkSync(join(dir, snapshotMetaName(2)));
  };

  const matrix: Array<[string, (dir: string) => void]> = [
    ['healthy', () => undefined],
    ['a torn tail of the newest journal', (dir) => truncate(join(dir, journalName(2)), 5)],
    ['a flipped byte inside the newest journal', (dir) => flip(join(dir, journalName(2)), () => 12)],
    ['a damaged newest snapshot', (dir) => flip(join(dir, snapshotName(2)), (size) => size - 100)],
    [
      'damage in a journal that a later one follows',
      (dir) => {
        onlySnapshot1(dir);
        flip(join(dir, journalName(1)), () => 12);
      },
    ],
    [
      'a torn tail of a journal that a later one follows',
      (dir) => {
        onlySnapshot1(dir);
        truncate(join(dir, journalName(1)), 3);
      },
    ],
    [
      'a missing journal in the chain',
      (dir) => {
        onlySnapshot1(dir);
        unlinkSync(join(dir, journalName(1)));
      },
    ],
    [
      'no snapshot, and journals that do not reach back to the start',
      (dir) => {
        onlySnapshot1(dir);
        flip(join(dir, snapshotName(1)), () => 50);
      },
    ],
    [
      'an unreplayable record',
      (dir) => {
        const path = join(dir, journalName(2));
        const bytes = readFileSync(path);
        const payload = Buffer.from(JSON.stringify([['INSERT INTO nowhere (id) VALUES (?)', [1]]]));
        writeFileSync(path, Buffer.concat([JOURNAL_MAGIC, frameRecord(payload), bytes.subarray(8)]));
      },
    ],
    ['a damaged older journal the data no longer needs', (dir) => flip(join(dir, journalName(1)), () => 12)],
  ];

  it('on every kind of damage: doctor says the start refuses exactly when it does, and what it keeps', async () => {
    const base = await template();
    const outcomes: string[] = [];
    for (const [name, damage] of matrix) {
      const forDoctor = newDir();
      cpSync(base, forDoctor, { recursive: true });
      damage(forDoctor);
      const forStore = newDir();
      cpSync(forDoctor, forStore, { recursive: true });

      const report = await runDoctor(forDoctor);
      const refusesPerDoctor = report.problems.some((p) => p.problem.includes('refuses to open'));
      const opened = await Store.open({ dataDir: forStore, clock: systemClock, logger: silentLogger }).then(
        async (store) => {
          const notes = store.db.first('SELECT count(*) FROM workspaces')?.[0];
          await store.close({ snapshot: false });
          return { notes: Number(notes) };
        },
        (err: unknown) => {
          expect(err, name).toBeInstanceOf(DataDamagedError);
          return null;
        },
      );
      expect({ name, refuses: opened === null }).toEqual({ name, refuses: refusesPerDoctor });
      if (opened) {
        // What doctor rebuilt in memory is what the store opened: the same writes.
        const doctorNotes = report.database?.facts.counts.workspaces;
        expect({ name, notes: opened.notes }).toEqual({ name, notes: doctorNotes });
      }
      outcomes.push(`${name}: ${opened ? `opens with ${opened.notes} workspaces` : 'refused'}`);
    }
    expect(outcomes).toEqual([
      'healthy: opens with 9 workspaces',
      'a torn tail of the newest journal: opens with 8 workspaces',
      'a flipped byte inside the newest journal: refused',
      'a damaged newest snapshot: opens with 9 workspaces',
      'damage in a journal that a later one follows: refused',
      'a torn tail of a journal that a later one follows: refused',
      'a missing journal in the chain: refused',
      'no snapshot, and journals that do not reach back to the start: refused',
      'an unreplayable record: refused',
      'a damaged older journal the data no longer needs: opens with 9 workspaces',
    ]);
  }, 240_000);
});
