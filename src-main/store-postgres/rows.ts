import type { PendingQuery, Sql, TransactionSql } from 'postgres';

/** A connection pool, or the one transaction a write runs in. */
export type Queryable = Sql | TransactionSql;

/** The statements each write has sent without waiting for their answers, by its transaction. */
const unanswered = new WeakMap<Queryable, Array<PromiseLike<unknown>>>();

/**
 * A statement whose answer the write does not need (an INSERT, an UPDATE without RETURNING).
 * In a write's transaction (`pipelined`) it goes out at once and is not waited for: the
 * statements after it follow it on the same connection, in order, without a round trip each,
 * and the write waits for every one of them before it commits, failing (and rolling back) with
 * the first that failed. Elsewhere it is waited for. A read after it, on the same transaction,
 * sees what it wrote (PostgreSQL runs a connection's statements one after the other).
 */
export async function send(sql: Queryable, query: PendingQuery<Row[]>): Promise<void> {
  const pending = unanswered.get(sql);
  if (pending) pending.push(query.execute());
  else await query;
}

/**
 * Runs a write's function on its transaction with `send` pipelining its statements; resolves
 * once every statement it sent has been answered (before the transaction commits).
 */
export async function pipelined<T>(tx: TransactionSql, fn: () => Promise<T>): Promise<T> {
  const pending: Array<PromiseLike<unknown>> = [];
  unanswered.set(tx, pending);
  try {
    const result = await fn();
    await Promise.all(pending);
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
