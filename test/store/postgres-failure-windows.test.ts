import { describe, expect, it } from 'vitest';
import { postgresFailureWindows } from '../../src-main/store-postgres/failure-windows.js';
import { useCleanups } from '../helpers/cleanups.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

const START = Date.parse('2026-11-27T10:00:00.000Z');

describe('failure windows on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  const addCleanup = useCleanups();

  async function pool(url: string) {
    const sql = await migratedPool(url);
    addCleanup(() => sql.end());
    return sql;
  }

  it('loses no failure when two pools count the same key at the same moment', async () => {
    const url = await pg.freshDatabase();
    const [sql, second] = [await pool(url), await pool(url)];
    let now = START;
    const limit = { scope: 'sign-in', max: 200, windowMs: 60_000, now: () => now };
    const a = postgresFailureWindows(sql, limit);
    const b = postgresFailureWindows(second, limit);

    await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).fail('someone@example.com')));
    const [row] = await sql<{ failures: number }[]>`SELECT failures FROM failure_windows`;
    expect(row?.failures).toBe(100);
    expect(await a.retryAfter('someone@example.com')).toBe(0);
    await Promise.all(Array.from({ length: 100 }, () => b.fail('someone@example.com')));
    expect(await a.retryAfter('someone@example.com')).toBe(60);
    now += 59_001;
    expect(await b.retryAfter('someone@example.com')).toBe(1);
  });

  it('starts a new window once one ends, keeps scopes apart, and deletes windows that ended', async () => {
    const sql = await pool(await pg.freshDatabase());
    let now = START;
    const signIn = postgresFailureWindows(sql, { scope: 'sign-in', max: 2, windowMs: 1000, now: () => now });
    const keys = postgresFailureWindows(sql, { scope: 'api-key', max: 2, windowMs: 120_000, now: () => now });

    await signIn.fail('loopback');
    await signIn.fail('loopback');
    expect(await signIn.retryAfter('loopback')).toBe(1);
    expect(await keys.retryAfter('loopback')).toBe(0);
    await keys.fail('loopback');

    now += 1000;
    expect(await signIn.retryAfter('loopback')).toBe(0);
    await signIn.fail('loopback');
    expect(await signIn.retryAfter('loopback')).toBe(0);
    await signIn.reset('loopback');
    const rows = async () =>
      (
        await sql<
          { scope: string; key: string }[]
        >`SELECT scope, key FROM failure_windows ORDER BY scope, key`
      ).map((r) => `${r.scope} ${r.key}`);
    expect(await rows()).toEqual(['api-key loopback']);

    // Many keys fail once; a minute after their windows ended, the next failure deletes them.
    for (let i = 0; i < 20; i += 1) await signIn.fail(`person-${i}@example.com`);
    expect(await rows()).toHaveLength(21);
    now += 61_000;
    await signIn.fail('late@example.com');
    expect(await rows()).toEqual(['api-key loopback', 'sign-in late@example.com']);
  });
});
