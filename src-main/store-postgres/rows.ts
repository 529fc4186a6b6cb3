import type { Sql, TransactionSql } from 'postgres';

/** A connection pool, or the one transaction a write runs in. */
export type Queryable = Sql | TransactionSql;

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
