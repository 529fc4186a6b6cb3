import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { createSqlJsStorage, storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { AwaitInsideWriteError, Store } from '../../src-main/store/store.js';
import type { UserRecord } from '../../src-main/store/users.js';
import { tempDir } from '../helpers/server.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function open(
  dataDir = tempDir('sessiondesk-storage-'),
): Promise<{ store: Store; storage: Storage; dataDir: string }> {
  if (!dirs.includes(dataDir)) dirs.push(dataDir);
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  stores.push(store);
  return { store, storage: createSqlJsStorage(store, createRepositories(store.db)), dataDir };
}

function user(n: number): UserRecord {
  return {
    id: `user_${n}`,
    email: `person${n}@example.com`,
    name: `Person ${n}`,
    passwordHash: 'not-a-hash',
    createdAt: '2026-11-27T00:00:00.000Z',
  };
}

describe('sql.js storage: the asynchronous faces of the repositories', () => {
  it('runs writes one at a time, so a read-then-write across awaits loses no update', async () => {
    const { storage } = await open();
    await storage.write(async (tx) => tx.users.insert({ ...user(1), passwordHash: '0' }));
    // The count is kept in a field the test may set freely: read, then written one await later.
    const bump = () =>
      storage.write(async (tx) => {
        const found = await tx.users.findById('user_1');
        const next = String(Number(found?.passwordHash) + 1);
        await tx.users.setPasswordHash('user_1', next);
        return next;
      });
    const answers = await Promise.all(Array.from({ length: 20 }, bump));
    expect(new Set(answers).size).toBe(20);
    expect((await storage.repos.users.findById('user_1'))?.passwordHash).toBe('20');
  });

  it('keeps writes one at a time when some of them change nothing', async () => {
    const { storage } = await open();
    await storage.write(async (tx) => tx.users.insert({ ...user(1), passwordHash: '0' }));
    const bump = () =>
      storage.write(async (tx) => {
        const found = await tx.users.findById('user_1');
        await tx.users.setPasswordHash('user_1', String(Number(found?.passwordHash) + 1));
      });
    // A write that only reads has nothing to journal: it ends without waiting for the disk.
    const look = () => storage.write(async (tx) => tx.users.findById('user_1'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? look() : bump())));
    expect((await storage.repos.users.findById('user_1'))?.passwordHash).toBe('10');
    // The write after one that changed nothing holds readers off until its own function is done.
    const { store } = await open();
    const second = storageOf(store);
    const held: boolean[] = [];
    await Promise.all([
      second.write(async (tx) => tx.users.findById('user_1')),
      second.write(async (tx) => {
        for (let i = 0; i < 20; i++) {
          await tx.users.findById('user_1');
          held.push(store.afterOpenWrite !== null);
        }
      }),
    ]);
    expect(held.every(Boolean)).toBe(true);
  });

  it('makes a read that arrives during a write wait for it, so it never sees half of one', async () => {
    const { storage } = await open();
    let readDuring: Promise<UserRecord | null> | undefined;
    await storage.write(async (tx) => {
      await tx.users.insert(user(1));
      readDuring = storage.repos.users.findById('user_2');
      await tx.users.insert(user(2));
    });
    expect((await readDuring)?.id).toBe('user_2');
  });

  it('rolls back a write whose function throws, and answers with its error', async () => {
    const { store, storage, dataDir } = await open();
    const failing = storage.write(async (tx) => {
      await tx.users.insert(user(1));
      throw new Error('changed my mind');
    });
    await expect(failing).rejects.toThrow('changed my mind');
    expect(await storage.repos.users.findById('user_1')).toBeNull();
    await storage.write(async (tx) => tx.users.insert(user(2)));
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const reopened = await open(dataDir);
    expect(await reopened.storage.repos.users.findById('user_1')).toBeNull();
    expect((await reopened.storage.repos.users.findById('user_2'))?.email).toBe('person2@example.com');
  });

  it('refuses and rolls back a write that awaits something other than the store, and writes on after it', async () => {
    const { storage } = await open();
    let madeLateCall!: (made: { call: Promise<unknown> }) => void;
    const lateCall = new Promise<{ call: Promise<unknown> }>((resolve) => (madeLateCall = resolve));
    const slow = storage.write(async (tx) => {
      await tx.users.insert(user(1));
      await sleep(5);
      const call = tx.users.insert(user(3));
      madeLateCall({ call });
      await call;
    });
    await expect(slow).rejects.toBeInstanceOf(AwaitInsideWriteError);
    await expect((await lateCall).call).rejects.toBeInstanceOf(AwaitInsideWriteError);
    expect(await storage.repos.users.findById('user_1')).toBeNull();
    expect(await storage.repos.users.findById('user_3')).toBeNull();
    await storage.write(async (tx) => tx.users.insert(user(2)));
    expect((await storage.repos.users.findById('user_2'))?.id).toBe('user_2');
  });

  it('turns a write that reads outside itself (waiting on itself) into an error, not a hang', async () => {
    const { storage } = await open();
    const selfWaiting = storage.write(async (tx) => {
      await tx.users.insert(user(1));
      await storage.repos.users.findById('user_1');
    });
    await expect(selfWaiting).rejects.toBeInstanceOf(AwaitInsideWriteError);
    expect(await storage.repos.users.findById('user_1')).toBeNull();
  });

  it('keeps a snapshot taken while a write is open free of it', async () => {
    const { store, storage, dataDir } = await open();
    let snapshot: Promise<unknown> | undefined;
    await storage.write(async (tx) => {
      await tx.users.insert(user(1));
      snapshot = store.snapshot();
      await tx.users.insert(user(2));
    });
    await snapshot;
    await store.close({ snapshot: false });
    stores.splice(stores.indexOf(store), 1);
    const reopened = await open(dataDir);
    expect((await reopened.storage.repos.users.findById('user_2'))?.id).toBe('user_2');
  });

  it('reads a transcript only after a write whose function is still running has handed its bytes over', async () => {
    const { store, storage } = await open();
    const sessionId = 'session_0123456789abcdef01234567';
    await storage.write(async (tx) => {
      await tx.users.insert(user(1));
      await tx.workspaces.insert({
        id: 'org_storage',
        name: 'Storage',
        createdAt: '2026-11-27T00:00:00.000Z',
      });
      await tx.sessions.insert({
        id: sessionId,
        workspaceId: 'org_storage',
        authorId: 'user_1',
        title: 'A session',
        model: 'claude-opus-4-6',
        createdAt: '2026-11-27T00:00:00.000Z',
        baseBranch: 'main',
      });
    });
    const order: string[] = [];
    let read: Promise<number> | undefined;
    await storage.write(async (tx) => {
      await tx.sessions.appendMessage(
        sessionId,
        'org_storage',
        { type: 'user', message: { content: 'hello' } },
        'user_1',
        '2026-11-27T00:00:01.000Z',
      );
      read = store.whenTranscriptSettled(sessionId, () => {
        order.push('read');
        return order.length;
      });
      await tx.sessions.update(sessionId, { title: 'Renamed' }, '2026-11-27T00:00:02.000Z');
      order.push('write done');
    });
    await read;
    expect(order).toEqual(['write done', 'read']);
  });
});
