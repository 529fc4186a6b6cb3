import type { SqlValue } from './sqljs.js';

/** Column readers for positional rows; a wrong type is a schema bug, so it throws. */
export function str(value: SqlValue | undefined): string {
  if (typeof value !== 'string') throw new TypeError(`expected a string column, got ${typeof value}`);
  return value;
}

export function optStr(value: SqlValue | undefined): string | undefined {
  return value === null || value === undefined ? undefined : str(value);
}

export function num(value: SqlValue | undefined): number {
  if (typeof value !== 'number') throw new TypeError(`expected a number column, got ${typeof value}`);
  return value;
}

export function optNum(value: SqlValue | undefined): number | undefined {
  return value === null || value === undefined ? undefined : num(value);
}

/** A column holding a JSON array (approval rules, say): its JSON, null when it has no items. */
export function jsonArrayColumn(items: readonly unknown[] | undefined): string | null {
  return items && items.length > 0 ? JSON.stringify(items) : null;
}
