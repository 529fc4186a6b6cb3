import { openSync, readFileSync, unlinkSync, writeSync, closeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'sessiondesk.lock';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another Session Desk process (pid ${pid}). ` +
        'Stop it first, or use a different --data-dir.',
    );
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads the pid in a lock file, or null when it is unreadable or not a lock of ours. */
export function readLockPid(dataDir: string): number | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { pid?: unknown };
    return typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) ? parsed.pid : null;
  } catch {
    return null;
  }
}

/** The pid of a live process holding the data directory, if any. */
export function lockHolder(dataDir: string): number | null {
  const pid = readLockPid(dataDir);
  return pid !== null && pid !== process.pid && processAlive(pid) ? pid : null;
}

/**
 * Takes the data directory for this process. A lock left by a process that no longer
 * runs (or an unreadable one, from a crash while writing it) is stale and is replaced.
 */
export function acquireLock(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return () => {
        if (readLockPid(dataDir) === process.pid) unlinkSync(path);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = readLockPid(dataDir);
      if (pid !== null && processAlive(pid)) throw new DataDirLockedError(dataDir, pid);
      unlinkSync(path);
    }
  }
  throw new Error(`Could not take the lock ${path}; another process keeps replacing it.`);
}
