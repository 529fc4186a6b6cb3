import { readdirSync, readFileSync } from 'node:fs';

/** How long a process group gets to end after SIGTERM before it is sent SIGKILL. */
export const STOP_GRACE_MS = 5000;
const POLL_MS = 50;

function fieldsOf(pid: string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name, which may hold spaces and parentheses: state, ppid, pgrp, …
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Whether any process of group `pgid` still runs. On Linux, zombies do not count: they have
 * ended, and where nothing reaps orphans (pid 1 of some containers) they stay listed for good.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    const fields = fieldsOf(entry);
    if (fields && fields[2] === String(pgid) && fields[0] !== 'Z') return true;
  }
  return false;
}

/** Whether process `pid` has ended (gone, or a zombie nobody has reaped yet). */
export function processEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return process.platform === 'linux' && fieldsOf(String(pid))?.[0] === 'Z';
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* the group is gone already */
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends process group `pgid`: SIGTERM to every process in it, SIGKILL to what is left after
 * `graceMs`; resolves once none of them runs.
 */
export async function endGroup(pgid: number, graceMs = STOP_GRACE_MS): Promise<void> {
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  await waitForGroupEnd(pgid, graceMs);
}

/**
 * Waits for group `pgid` to end, sending SIGKILL once `graceMs` have passed; gives up a grace
 * period after that (a process stuck in the kernel cannot be ended from here).
 */
export async function waitForGroupEnd(pgid: number, graceMs = STOP_GRACE_MS): Promise<void> {
  const killAt = Date.now() + graceMs;
  let killed = false;
  while (groupAlive(pgid) && Date.now() < killAt + graceMs) {
    if (!killed && Date.now() >= killAt) {
      signalGroup(pgid, 'SIGKILL');
      killed = true;
    }
    await sleep(POLL_MS);
  }
}
