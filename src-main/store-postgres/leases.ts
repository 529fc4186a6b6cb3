import { createHash } from 'node:crypto';
import type { Sql } from 'postgres';
import { connect } from './connect.js';

/** The top 16 bits of every lease's advisory lock ("SD"): other programs' locks keep clear of it. */
const LEASE_NAMESPACE = 0x5344n;
/** How often each process looks for the runs of processes that died. */
export const LEASE_SWEEP_MS = 5000;
/** A session changed more recently than this is never taken for crashed (see RunLeases.quietForMs). */
export const LEASE_QUIET_MS = 10_000;

/**
 * The advisory lock of a session's lease: "SD" and 48 bits of the SHA-256 of its id, one 64-bit
 * key. Two sessions share a lock only if those bits are alike (one chance in 2^48 for a pair);
 * PostgreSQL's 32-bit `hashtext` made that one in 2^32.
 */
export function leaseKey(sessionId: string): string {
  const hash = createHash('sha256').update(sessionId).digest();
  return String((LEASE_NAMESPACE << 48n) | (hash.readBigUInt64BE(0) >> 16n));
}

/**
 * Run leases (agents/run/leases.ts) as PostgreSQL session-level advisory locks, keyed by the
 * session id (`leaseKey`): a process that dies loses its connection, and PostgreSQL releases its
 * locks at once. They are held on a connection of their own, in a pool of one that never
 * rotates it (not `sql.reserve()`: postgres.js 3.4.9 throws, uncatchably, on a query to a
 * reserved connection whose server went away, porsager/postgres#1208). When that connection
 * is lost (the database restarted), so are its locks: the next lease query, on a new
 * connection, sees another backend pid and takes this process's leases again.
 *
 * Which process holds a session's lease is the backend pid of that connection, in `pg_locks`
 * (`holderOf`): what a request about a run is sent to (run-requests.ts), and what that process
 * checks against the leases it knows it holds (`holds`), so that a request never acts on a run
 * that is not its own.
 */
export async function postgresRunLeases(url: string) {
  const sql: Sql = await connect(url, { max: 1, keepConnections: true });
  const held = new Set<string>();
  const taking = new Map<string, Promise<boolean>>();
  let backend: number | null = null;

  /** Takes a lease on the one connection, first taking again those a lost connection let go. */
  async function tryLock(sessionId: string): Promise<boolean> {
    const [row] = await sql<Array<{ pid: number; taken: boolean }>>`
      SELECT pg_backend_pid() AS pid, pg_try_advisory_lock(${leaseKey(sessionId)}::bigint) AS taken`;
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
      await sql`SELECT pg_advisory_unlock(${leaseKey(sessionId)}::bigint)`;
    },
    /** Whether this process holds the session's lease. */
    holds(sessionId: string): boolean {
      return held.has(sessionId);
    },
    /** The backend pid of this process's lease connection: null before its first lease. */
    get pid(): number | null {
      return backend;
    },
    /** The backend pid holding the session's lease, in any process; null when none holds it. */
    async holderOf(sessionId: string): Promise<number | null> {
      const key = leaseKey(sessionId);
      // A one-key advisory lock shows in pg_locks as its high and low 32 bits (objsubid 1).
      const [row] = await sql<Array<{ pid: number }>>`
        SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 1
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = (${key}::bigint >> 32)::oid AND objid = (${key}::bigint & 4294967295)::oid`;
      return row?.pid ?? null;
    },
    sweepEveryMs: LEASE_SWEEP_MS,
    quietForMs: LEASE_QUIET_MS,
    async close(): Promise<void> {
      held.clear();
      await sql.end({ timeout: 5 });
    },
  };
}
export type PostgresRunLeases = Awaited<ReturnType<typeof postgresRunLeases>>;
