import type { Db } from './sqljs.js';

/** What a migration step is given: the database, a way to write, and a line of progress. */
export interface MigrationStep {
  db: Db;
  write<T>(fn: (db: Db) => T): Promise<T>;
  progress(text: string): void;
}
