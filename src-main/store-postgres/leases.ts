import type { ReservedSql, Sql } from 'postgres';

/** The first key of every lease's advisory lock ("SD"): other programs' locks keep clear of it. */
const LEASE_NAMESPACE = 0x5344;
/** How often each process looks for the runs of processes that died. */
export const LEASE_SWEEP_MS = 5000;

/**
 * Run leases (agents/run/leases.ts) as PostgreSQL session-level advisory locks, keyed by the
 * session id's hash and held on one connection reserved for them: a process that dies loses
 * its connection, and PostgreSQL releases its locks at once. Two sessions whose ids hash alike
 * (one chance in 2^32) share a lease: the second waits for the first's run to end before a
 * crash of it is noticed. A connection lost while the process lives loses its leases too: the
 * lease is taken again at the next run.
 */
export function postgresRunLeases(sql: Sql) {
  let connection: Promise<ReservedSql> | null = null;
  const held = new Set<string>();
  const reserved = () => (connection ??= sql.reserve());
  return {
    async take(sessionId: string): Promise<boolean> {
      if (held.has(sessionId)) return true;
      const db = await reserved();
      const [row] = await db<Array<{ taken: boolean }>>`
        SELECT pg_try_advisory_lock(${LEASE_NAMESPACE}, hashtext(${sessionId})) AS taken`;
      if (row?.taken) held.add(sessionId);
      return row?.taken === true;
    },
    async release(sessionId: string): Promise<void> {
      if (!held.delete(sessionId)) return;
      const db = await reserved();
      await db`SELECT pg_advisory_unlock(${LEASE_NAMESPACE}, hashtext(${sessionId}))`;
    },
    sweepEveryMs: LEASE_SWEEP_MS,
    async close(): Promise<void> {
      held.clear();
      const db = await connection;
      connection = null;
      if (!db) return;
      // The locks belong to the connection: they go before it returns to the pool.
      await db`SELECT pg_advisory_unlock_all()`.catch(() => undefined);
      db.release();
    },
  };
}
