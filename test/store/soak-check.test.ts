import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { atRestart, leftoverTempFiles, snapshotUnderWay, tempFiles } from '../../bench/soak.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';
import { Store } from '../../src-main/store/store.js';
import { tempDir } from '../helpers/server.js';

/**
 * The crash soak's check after each restart (bench/soak.ts): a temp file recovery should
 * have removed is a violation, but a restarted server may begin a snapshot of its own at
 * once, and that snapshot's temp file is neither a leftover nor a file to copy.
 */

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = tempDir('sessiondesk-soak-check-');
  dirs.push(dir);
  return dir;
}

/** A promise and the function that settles it. */
function held(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

const SNAPSHOT_TMP = /^snapshot-\d{12}\.db\.tmp$/u;

async function storeWithWrites(dir: string, files: FileLayer = realFiles): Promise<Store> {
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger, files });
  await store.write((db) => db.run('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY)'));
  for (let id = 1; id <= 5; id += 1) {
    await store.write((db) => db.run('INSERT OR IGNORE INTO notes (id) VALUES (?)', [id]));
  }
  return store;
}

describe('the soak’s check after a restart', () => {
  it('tells a snapshot the restarted store is writing from a leftover of the kill', async () => {
    const dir = newDir();
    // Two generations before the kill, so the restart's snapshot has older ones to remove.
    const before = await storeWithWrites(dir);
    await before.snapshot();
    await before.write((db) => db.run('INSERT INTO notes (id) VALUES (6)'));
    await before.snapshot();
    await before.write((db) => db.run('INSERT INTO notes (id) VALUES (7)'));
    await before.close({ snapshot: false });
    // What a kill during a snapshot leaves.
    writeFileSync(join(dir, 'snapshot-000000000003.db.tmp'), 'cut off by the kill');
    const atKill = tempFiles(dir);
    const restart = atRestart(dir, atKill);

    // The restart removes the leftover, then begins a snapshot on a slow disk: its rename,
    // then its removal of the generations it no longer needs, wait until let go.
    const holds = { rename: held(), unlink: held() };
    const slow: FileLayer = {
      ...realFiles,
      async rename(from, to) {
        if (SNAPSHOT_TMP.test(basename(from))) await holds.rename.promise;
        return realFiles.rename(from, to);
      },
      async unlink(path) {
        if (/^(snapshot|journal)-\d{12}\.(db|log)$/u.test(basename(path))) await holds.unlink.promise;
        return realFiles.unlink(path);
      },
    };
    const store = await storeWithWrites(dir, slow);
    const snapshot = store.snapshot();
    await expect.poll(() => readdirSync(dir).some((n) => SNAPSHOT_TMP.test(n))).toBe(true);

    // A check by name alone takes the live snapshot's temp file for a leftover.
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).not.toEqual([]);
    expect(leftoverTempFiles(atKill, tempFiles(dir))).toEqual([]);
    expect(snapshotUnderWay(dir, restart)).toBe(true);

    holds.rename.resolve();
    await expect.poll(() => readdirSync(dir).some((n) => SNAPSHOT_TMP.test(n))).toBe(false);
    // Written, but older generations still being removed: a copy now could lose a file mid-way.
    expect(snapshotUnderWay(dir, restart)).toBe(true);

    holds.unlink.resolve();
    await snapshot;
    expect(snapshotUnderWay(dir, restart)).toBe(false);
    await store.close({ snapshot: false });
  });

  it('reports a temp file that is still the one the kill left, not a new one of the same name', () => {
    const dir = newDir();
    writeFileSync(join(dir, 'snapshot-000000000002.db.tmp'), 'left by the kill');
    writeFileSync(join(dir, 'snapshot-000000000002.json.tmp'), 'left by the kill');
    const atKill = tempFiles(dir);
    // The same name made again after the restart (written, then renamed over the old one).
    writeFileSync(join(dir, 'next'), 'made after the restart');
    renameSync(join(dir, 'next'), join(dir, 'snapshot-000000000002.json.tmp'));
    expect(leftoverTempFiles(atKill, tempFiles(dir))).toEqual(['snapshot-000000000002.db.tmp']);
  });
});
