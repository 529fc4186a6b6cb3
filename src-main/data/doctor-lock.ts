import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_FILE, SERVER_FILE, type ServerInfo } from '../server-file.js';
import { LOCK_FILE, lockHolder, readLockPid } from '../store/lock.js';
import type { DoctorReport, Finding } from './doctor-report.js';

/**
 * Doctor's look at who holds a data directory: its lock and the running server's
 * server.json, and what a lock or a server.json left by a process that is gone means. Apart
 * from the data itself because it reads only these two small files and never the store.
 */

export function lockState(dataDir: string): DoctorReport['lock'] {
  if (!existsSync(join(dataDir, LOCK_FILE))) return { state: 'free' };
  const holder = lockHolder(dataDir);
  if (holder !== null) return { state: 'held', pid: holder, byServer: false };
  return { state: 'stale', pid: readLockPid(dataDir) };
}

export function serverState(dataDir: string, lock: DoctorReport['lock']): DoctorReport['server'] {
  let info: ServerInfo | null = null;
  try {
    info = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as ServerInfo;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
  }
  if (info && lock.state === 'held' && info.pid === lock.pid) {
    lock.byServer = true;
    return { state: 'running', info };
  }
  return { state: 'stale', info };
}

export function lockProblems(
  dataDir: string,
  lock: DoctorReport['lock'],
  server: DoctorReport['server'],
): Finding[] {
  const problems: Finding[] = [];
  if (lock.state === 'stale') {
    problems.push({
      subject: LOCK_FILE,
      problem:
        lock.pid === null
          ? 'is unreadable: it was left by a process that crashed while taking it'
          : `names process ${lock.pid}, which is not running (or that pid now belongs to another ` +
            'process): it was left by a process that crashed',
      fix: `Nothing to do by hand: the next server or command takes it over. You may also delete ${join(dataDir, LOCK_FILE)}.`,
    });
  }
  if (server.state === 'stale') {
    problems.push({
      subject: SERVER_FILE,
      problem: server.info
        ? `describes a server (pid ${server.info.pid}, ${server.info.url}) that is not running: it did not ` +
          'stop cleanly, and scripts that read the file find a dead URL'
        : 'is unreadable',
      fix:
        `Start the server again (it rewrites the file), or delete ${join(dataDir, SERVER_FILE)} and ` +
        `${join(dataDir, ADMIN_TOKEN_FILE)}.`,
    });
  }
  return problems;
}
