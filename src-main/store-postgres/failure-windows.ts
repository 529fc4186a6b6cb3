import type { Sql } from 'postgres';

/** Expired windows are deleted at most this often by each process. */
const PRUNE_EVERY_MS = 60_000;

export interface FailureWindowOptions {
  /** What is counted ("sign-in", "api-key"): one table holds every limit, apart by scope. */
  scope: string;
  max: number;
  windowMs: number;
  /** Epoch milliseconds: the server's clock, not the database's, as every timestamp here. */
  now: () => number;
}

/**
 * A team server's failure limits (server/auth/rate-limit.ts `FailureLimiter`) in the
 * `failure_windows` table, shared by every process on the database. A failure is one
 * statement whose window logic is in SQL (a new window, or one more in the current one), so
 * two processes counting the same key at once both count. Rows of windows that ended are
 * deleted as failures come in, so the table holds only the windows still running.
 */
export function postgresFailureWindows(sql: Sql, options: FailureWindowOptions) {
  const { scope, max, windowMs } = options;
  let prunedAt = 0;

  async function prune(now: number): Promise<void> {
    if (now - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = now;
    await sql`DELETE FROM failure_windows WHERE reset_at <= ${now}::bigint`;
  }

  return {
    async retryAfter(key: string): Promise<number> {
      const now = options.now();
      const [row] = await sql<{ wait: number }[]>`
        SELECT ceil((reset_at - ${now}::bigint) / 1000.0)::int AS wait FROM failure_windows
        WHERE scope = ${scope} AND key = ${key} AND reset_at > ${now}::bigint AND failures >= ${max}::int`;
      return row?.wait ?? 0;
    },

    async fail(key: string): Promise<void> {
      const now = options.now();
      await sql`
        INSERT INTO failure_windows AS w (scope, key, failures, reset_at)
        VALUES (${scope}, ${key}, 1, ${now + windowMs}::bigint)
        ON CONFLICT (scope, key) DO UPDATE SET
          failures = CASE WHEN w.reset_at <= ${now}::bigint THEN 1 ELSE w.failures + 1 END,
          reset_at = CASE WHEN w.reset_at <= ${now}::bigint THEN excluded.reset_at ELSE w.reset_at END`;
      await prune(now);
    },

    async reset(key: string): Promise<void> {
      await sql`DELETE FROM failure_windows WHERE scope = ${scope} AND key = ${key}`;
    },
  };
}

/**
 * Keys remembered for `keepMs` since they were last told (server/auth/rate-limit.ts
 * `Remembered`), as rows of `failure_windows` in a scope of their own: the window is how long
 * a key is kept, and the pruning above ends it.
 */
export function postgresRemembered(sql: Sql, options: { scope: string; keepMs: number; now: () => number }) {
  const { scope, keepMs } = options;
  return {
    async remember(key: string): Promise<void> {
      const until = options.now() + keepMs;
      await sql`
        INSERT INTO failure_windows (scope, key, failures, reset_at) VALUES (${scope}, ${key}, 0, ${until}::bigint)
        ON CONFLICT (scope, key) DO UPDATE SET reset_at = excluded.reset_at`;
    },

    async knows(key: string): Promise<boolean> {
      const [row] = await sql<{ kept: number }[]>`
        SELECT 1 AS kept FROM failure_windows
        WHERE scope = ${scope} AND key = ${key} AND reset_at > ${options.now()}::bigint`;
      return row !== undefined;
    },
  };
}
