/**
 * Which server process a session's agent run belongs to. A process takes a session's lease
 * before it runs or queues its agent and lets it go once the run's end is recorded; only the
 * process holding it touches the run, and a run whose process is gone is found by another
 * taking its lease (crashed-runs.ts). On the desktop one process holds the data directory, so
 * every lease is its own (`SOLE_PROCESS`); a team server's processes share PostgreSQL, whose
 * advisory locks end with the connection of a process that dies (store-postgres/leases.ts).
 */
export interface RunLeases {
  /**
   * Takes the session's lease for this process: `acquired` now, `held` already (by this
   * process), or `refused` (another process holds it).
   */
  take(sessionId: string): Promise<'acquired' | 'held' | 'refused'>;
  /** Lets the session's lease go. */
  release(sessionId: string): Promise<void>;
  /** How often another process's dead runs are looked for; null: never (one process). */
  readonly sweepEveryMs: number | null;
  /**
   * How long a run's session must have been unchanged before another process may recover it:
   * a process marks a session running a moment before it takes the lease.
   */
  readonly quietForMs: number;
  /** Lets every lease go: for whoever made the leases, once nothing runs. */
  close(): Promise<void>;
}

/** One process holds the data: every lease is its own. */
export const SOLE_PROCESS: RunLeases = {
  take: () => Promise.resolve('acquired'),
  release: () => Promise.resolve(),
  sweepEveryMs: null,
  quietForMs: 0,
  close: () => Promise.resolve(),
};
