import type { Sql } from 'postgres';
import { connect } from './connect.js';

/** The first key of every lease's advisory lock ("SD"): other programs' locks keep clear of it. */
const LEASE_NAMESPACE = 0x5344;
/** How often each process looks for the runs of processes that died. */
export const LEASE_SWEEP_MS = 5000;
/** A session changed more recently than this is never taken for crashed (see RunLeases.quietForMs). */
export const LEASE_QUIET_MS = 10_000;

/**
 * Run leases (agents/run/leases.ts) as PostgreSQL session-level advisory locks, keyed by the
 * session id's hash: a process that dies loses its connection, and PostgreSQL releases its
 * locks at once. They are held on a connection of their own, in a pool of one that never
 * rotates it (not `sql.reserve()`: postgres.js 3.4.9 throws, uncatchably, on a query to a
 * reserved connection whose server went away, porsager/postgres#1208). When that connection
 * is lost (the database restarted), so are its locks: the next lease query, on a new
 * connection, sees another backend pid and takes this process's leases again. Two sessions whose
 * ids hash alike (one chance in 2^32) share a lease: a crash of the second is noticed once the
 * first's run ends.
 */
export async function postgresRunLeases(url: string) {
  const sql: Sql = await connect(url, { max: 1, keepConnections: true });
  const held = new Set<string>();
  const taking = new Map<string, Promise<boolean>>();
  let backend: number | null = null;

  /** Takes a lease on the one connection, first taking again those a lost connection let go. */
  async function tryLock(sessionId: string): Promise<boolean> {
    const [row] = await sql<Array<{ pid: number; taken: boolean }>>`
      SELECT pg_backend_pid() AS pid, pg_try_advisory_lock(${LEASE_NAMESPACE}, hashtext(${sessionId})) AS taken`;
    if (!row) return false;
    if (backend !== null && row.pid !== backend) {
      backend = row.pid;
      for (const id of [...held]) if (id !== sessionId && !(await tryLock(id))) held.delete(id);
    }
    backend = row.pid;
    return row.taken;
  }

  return {
    async take(sessionId: string): Promise<'acquired' | 'held' | 'refused'> {
      if (held.has(sessionId)) return 'held';
      // One take of a session at a time: two at once would stack the lock, and one unlock leave it.
      const going = taking.get(sessionId);
      if (going) return (await going) ? 'held' : 'refused';
      const attempt = tryLock(sessionId).finally(() => taking.delete(sessionId));
      taking.set(sessionId, attempt);
      const taken = await attempt;
      if (taken) held.add(sessionId);
      return taken ? 'acquired' : 'refused';
    },
    async release(sessionId: string): Promise<void> {
      if (!held.delete(sessionId)) return;
      await sql`SELECT pg_advisory_unlock(${LEASE_NAMESPACE}, hashtext(${sessionId}))`;
    },
    sweepEveryMs: LEASE_SWEEP_MS,
    quietForMs: LEASE_QUIET_MS,
    async close(): Promise<void> {
      held.clear();
      await sql.end({ timeout: 5 });
    },
  };
}
