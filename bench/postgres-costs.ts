import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from 'postgres';

/**
 * What a request costs beside how long it takes, for `bench/postgres.ts`: the CPU of the
 * server processes and of the database (every process of the bench's own cluster), and the
 * statements and transactions the database ran (pg_stat_statements, pg_stat_database). On a
 * machine whose cores are all busy, a second server process adds nothing; these figures say
 * what would scale on a machine with more.
 */

export interface Costs {
  /** Requests the figures are divided by. */
  requests: number;
  /** CPU of the server processes (all of them, added), per request. */
  serverCpuMs: number;
  /** CPU of the database's processes, per request (PostgreSQL only). */
  databaseCpuMs?: number;
  /** Statements the database ran, per request (PostgreSQL only). */
  statements?: number;
  /** Transactions it committed, per request (a statement outside one is one). */
  transactions?: number;
}

/** Linux's clock ticks per second (USER_HZ), what /proc counts CPU in. */
const TICKS_PER_SECOND = 100;

/** CPU used so far by a process, user and system, in ms (/proc/PID/stat fields 14 and 15). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name, in parentheses, may hold spaces: fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU used so far by a cluster's postmaster and every process it started, in ms. */
function clusterCpuMs(clusterDir: string): number {
  const postmaster = Number(readFileSync(join(clusterDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ms = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (Number(entry) === postmaster || parent === postmaster) ms += cpuMsOf(Number(entry));
    } catch {
      // A process that ended between the listing and the read.
    }
  }
  return ms;
}

/** The database's counters: statements run (pg_stat_statements) and transactions committed. */
async function counters(admin: Sql): Promise<{ statements: number; transactions: number }> {
  const [row] = await admin<Array<{ statements: number; transactions: number }>>`
    SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))::bigint AS statements,
      (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::bigint AS transactions`;
  return { statements: Number(row?.statements), transactions: Number(row?.transactions) };
}

/** What the meter's own reading of the counters adds to them: this statement, one transaction. */
const OWN = { statements: 1, transactions: 1 };

/**
 * Starts measuring: `stop(requests)` answers the costs since, per request. With `database`,
 * its cluster's CPU and counters too (its role must see pg_stat_statements, which the bench's
 * cluster loads: `shared_preload_libraries`).
 */
export async function meter(
  serverPids: number[],
  database?: { admin: Sql; clusterDir: string },
): Promise<{ stop(requests: number): Promise<Costs> }> {
  const serverCpu = () => serverPids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
  const startServer = serverCpu();
  const startCluster = database ? clusterCpuMs(database.clusterDir) : 0;
  const startCounts = database ? await counters(database.admin) : null;
  return {
    async stop(requests) {
      const per = (value: number) => value / Math.max(1, requests);
      const costs: Costs = { requests, serverCpuMs: per(serverCpu() - startServer) };
      if (database && startCounts) {
        costs.databaseCpuMs = per(clusterCpuMs(database.clusterDir) - startCluster);
        const end = await counters(database.admin);
        costs.statements = per(end.statements - startCounts.statements - OWN.statements);
        costs.transactions = per(end.transactions - startCounts.transactions - OWN.transactions);
      }
      return costs;
    },
  };
}
