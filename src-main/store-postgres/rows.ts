import type { PendingQuery, Sql, TransactionSql } from 'postgres';

/** A connection pool, or the one transaction a write runs in. */
export type Queryable = Sql | TransactionSql;

/** What a write's transaction has sent without waiting, and what it sends just before it commits. */
interface Unanswered {
  pending: Array<PromiseLike<unknown>>;
  last: Array<PendingQuery<Row[]>>;
}
const unanswered = new WeakMap<Queryable, Unanswered>();

/**
 * A statement whose answer the write does not need (an INSERT, an UPDATE without RETURNING).
 * In a write's transaction (`pipelined`) it goes out at once and is not waited for: the
 * statements after it follow it on the same connection, in order, without a round trip each,
 * and the write waits for every one of them before it commits, failing (and rolling back) with
 * the first that failed. Elsewhere it is waited for. A read after it, on the same transaction,
 * sees what it wrote (PostgreSQL runs a connection's statements one after the other).
 */
export async function send(sql: Queryable, query: PendingQuery<Row[]>): Promise<void> {
  const write = unanswered.get(sql);
  if (write) write.pending.push(query.execute());
  else await query;
}

/**
 * `send`, for a statement that changes a row many writes change (a person's counts in
 * workspace_people): it goes out after everything else the write does, just before the commit,
 * so that the row's lock is held from there to the commit only. Held from where the write
 * made it, the lock queued every follow-up of one person behind the others, each waiting out
 * the rest of the others' writes (some 50 ms each, 32 follow-ups at once). The write's own
 * reads do not see it.
 */
export async function sendLast(sql: Queryable, query: PendingQuery<Row[]>): Promise<void> {
  const write = unanswered.get(sql);
  if (write) write.last.push(query);
  else await query;
}

/**
 * Runs a write's function on its transaction with `send` pipelining its statements; resolves
 * once every statement it sent has been answered (before the transaction commits).
 */
export async function pipelined<T>(tx: TransactionSql, fn: () => Promise<T>): Promise<T> {
  const write: Unanswered = { pending: [], last: [] };
  unanswered.set(tx, write);
  try {
    const result = await fn();
    for (const query of write.last) write.pending.push(query.execute());
    await Promise.all(write.pending);
    return result;
  } finally {
    unanswered.delete(tx);
  }
}

/** A row as postgres.js answers it: by column name. */
export type Row = Record<string, unknown>;

/**
 * A TEXT column that is never null. As on sql.js (`store/row.ts`), anything else is a schema bug
 * or a row a writer left half made, so it throws rather than answer the word "null".
 */
export function text(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`expected a text column, got ${typeof value}`);
  return value;
}

export function optText(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : text(value);
}
