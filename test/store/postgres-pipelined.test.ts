import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pipelined, send } from '../../src-main/store-postgres/rows.js';
import { useCleanups } from '../helpers/cleanups.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';

/**
 * A write's statements sent without waiting (`send` in `pipelined`): one that fails must fail the
 * write and roll it back, however long the write goes on after it, and never be a rejection no
 * one handles (which ends a Node process).
 */
describe('a pipelined write on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  const addCleanup = useCleanups();
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', record);
  afterEach(() => {
    unhandled.length = 0;
  });
  afterAll(() => void process.off('unhandledRejection', record));

  async function table() {
    const sql = await migratedPool(await pg.freshDatabase());
    addCleanup(() => sql.end());
    await sql`CREATE TABLE pipelined_rows (id integer PRIMARY KEY)`;
    return sql;
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('fails with a statement that failed while the write went on, and keeps nothing of it', async () => {
    const sql = await table();
    const write = sql.begin((tx) =>
      pipelined(tx, async () => {
        await send(tx, tx`INSERT INTO pipelined_rows VALUES (1)`);
        await send(tx, tx`INSERT INTO pipelined_rows VALUES (1)`);
        // The write does something else meanwhile: the duplicate's error arrives before it ends.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return 'done';
      }),
    );
    await expect(write).rejects.toMatchObject({ code: '23505' });
    await settle();
    expect(unhandled).toEqual([]);
    expect(await sql`SELECT id FROM pipelined_rows`).toEqual([]);
  });

  it('fails with its own error when a read after a failed statement fails too', async () => {
    const sql = await table();
    const write = sql.begin((tx) =>
      pipelined(tx, async () => {
        await send(tx, tx`INSERT INTO pipelined_rows VALUES (2)`);
        await send(tx, tx`INSERT INTO pipelined_rows VALUES (2)`);
        await send(tx, tx`INSERT INTO pipelined_rows VALUES (3)`);
        // The transaction is aborted: this read fails, and the write with it.
        return tx`SELECT count(*) FROM pipelined_rows`;
      }),
    );
    await expect(write).rejects.toBeInstanceOf(Error);
    await settle();
    expect(unhandled).toEqual([]);
    expect(await sql`SELECT id FROM pipelined_rows`).toEqual([]);
  });

  it('commits every statement it sent, in order, when none fails', async () => {
    const sql = await table();
    await sql.begin((tx) =>
      pipelined(tx, async () => {
        for (const id of [5, 6, 7]) await send(tx, tx`INSERT INTO pipelined_rows VALUES (${id})`);
        const [seen] = await tx<{ n: string }[]>`SELECT count(*) AS n FROM pipelined_rows`;
        expect(Number(seen?.n)).toBe(3);
      }),
    );
    expect((await sql<{ id: number }[]>`SELECT id FROM pipelined_rows ORDER BY id`).map((r) => r.id)).toEqual(
      [5, 6, 7],
    );
    expect(unhandled).toEqual([]);
  });
});
