import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
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

/**
 * What a lock file holds. A pid alone cannot tell its process from a later one given the
 * same number (after a reboot, or pid 1 in every container), so the lock also names the
 * boot and the process's start time where the system tells them (Linux).
 */
interface LockContent {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat, field 22). */
  startTime?: string;
  /** /proc/sys/kernel/random/boot_id: which boot the pid and start time belong to. */
  bootId?: string;
  /** Tells this process's lock from one an earlier run of the same pid left. */
  token: string;
  startedAt: string;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Which boot this is (Linux); with a start time, it tells a process from a later one given its pid. */
export function bootId(): string | null {
  return process.platform === 'linux' ? readText('/proc/sys/kernel/random/boot_id') : null;
}

/** The start time of process `pid`, or null where the system does not say (or it is gone). */
export function startTimeOf(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // Field 2 (the command name, in parentheses) may hold spaces and parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[22 - 3] ?? null;
}

/** Tokens of the locks this process holds: a lock naming this pid is ours only if listed. */
const heldHere = new Set<string>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseLock(text: string): LockContent | null {
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return null;
    return {
      pid: parsed.pid,
      token: typeof parsed.token === 'string' ? parsed.token : '',
      startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : '',
      ...(typeof parsed.startTime === 'string' ? { startTime: parsed.startTime } : {}),
      ...(typeof parsed.bootId === 'string' ? { bootId: parsed.bootId } : {}),
    };
  } catch {
    return null;
  }
}

function readLock(dataDir: string): LockContent | null {
  const text = readText(join(dataDir, LOCK_FILE));
  return text === null ? null : parseLock(text);
}

/**
 * Whether the process that wrote `lock` still runs: its pid is alive, and where the lock
 * names a boot and a start time, they are this boot's and that pid's.
 */
function holderRuns(lock: LockContent): boolean {
  if (lock.pid === process.pid) return heldHere.has(lock.token);
  const boot = bootId();
  if (lock.bootId !== undefined && boot !== null && lock.bootId !== boot) return false;
  if (!processAlive(lock.pid)) return false;
  if (lock.startTime === undefined) return true;
  const now = startTimeOf(lock.pid);
  return now === null || now === lock.startTime;
}

/** Reads the pid in a lock file, or null when it is unreadable or not a lock of ours. */
export function readLockPid(dataDir: string): number | null {
  return readLock(dataDir)?.pid ?? null;
}

/** The pid of a live process (other than this one) holding the data directory, if any. */
export function lockHolder(dataDir: string): number | null {
  const lock = readLock(dataDir);
  return lock !== null && lock.pid !== process.pid && holderRuns(lock) ? lock.pid : null;
}

function describeOwnLock(token: string): string {
  const startTime = startTimeOf(process.pid);
  const boot = bootId();
  const content: LockContent = {
    pid: process.pid,
    ...(startTime === null ? {} : { startTime }),
    ...(boot === null ? {} : { bootId: boot }),
    token,
    startedAt: new Date().toISOString(),
  };
  return JSON.stringify(content);
}

/** Writes `text` to a new file, fsync'd. */
function writeNewFile(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates the lock file whole or not at all: written under a temp name first, then linked
 * into place (a link fails if the name exists), so no one ever reads a half-written lock.
 * Returns false when a lock is already there.
 */
function createLock(path: string, text: string): boolean {
  const tmp = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  writeNewFile(tmp, text);
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links (some network and FAT ones): an exclusive create.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw err;
    try {
      writeNewFile(path, text);
      return true;
    } catch (createErr) {
      if ((createErr as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw createErr;
    }
  } finally {
    unlinkSync(tmp);
  }
}

/** Blocks for `ms` milliseconds (taking the lock is synchronous, and brief). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes a stale lock so that only one of several processes finding it at once can, and only
 * that file: the remover first takes a second lock, `LOCK.takeover`, made whole or not at all
 * like the lock itself, then checks that the lock is still the stale one it judged (its inode
 * and its text together: a file system reuses a freed inode at once, ext4 does, but a new lock
 * has a token of its own) and only then removes it. Renaming the lock aside and putting back a
 * live one, as before, left a moment without a lock in which a third process took it, so that
 * two held it. A takeover lock left by a process that no longer runs is removed.
 */
function removeStaleLock(path: string, stale: { ino: number; text: string }): void {
  const guard = `${path}.takeover`;
  if (!createLock(guard, describeOwnLock(randomBytes(12).toString('hex')))) {
    const holder = readLockFile(guard);
    if (holder !== null && (holder.lock === null || !holderRuns(holder.lock))) {
      try {
        unlinkSync(guard);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    } else {
      sleepSync(5);
    }
    return;
  }
  try {
    const now = readLockFile(path);
    if (now !== null && now.ino === stale.ino && now.text === stale.text) unlinkSync(path);
  } finally {
    unlinkSync(guard);
  }
}

/** The lock file's content and inode, read through one descriptor so the two agree. */
function readLockFile(path: string): { lock: LockContent | null; ino: number; text: string } | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const text = readFileSync(fd, 'utf8');
    return { lock: parseLock(text), ino: fstatSync(fd).ino, text };
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes the data directory for this process. A lock left by a process that no longer runs
 * (or by a process whose pid was given to another since), or an unreadable one, is stale
 * and is replaced.
 */
export function acquireLock(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const token = randomBytes(12).toString('hex');
  const text = describeOwnLock(token);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (createLock(path, text)) {
      heldHere.add(token);
      return () => {
        heldHere.delete(token);
        if (readLock(dataDir)?.token === token) unlinkSync(path);
      };
    }
    const found = readLockFile(path);
    if (found === null) continue;
    if (found.lock !== null && holderRuns(found.lock)) throw new DataDirLockedError(dataDir, found.lock.pid);
    removeStaleLock(path, found);
  }
  throw new Error(`Could not take the lock ${path}; other processes keep replacing it.`);
}
