import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

/**
 * A run's processes where no operating-system sandbox holds them. Agent CLIs start tools in
 * process sessions of their own (Codex, Gemini CLI), out of reach of a signal to the run's
 * process group; such a process is still a descendant of the run while its parent lives, and
 * once orphaned it still works in the session's folder. Both are looked for here.
 */

/** A process, named by its pid and the time it started (a pid is reused; the pair is not). */
export interface ProcessId {
  pid: number;
  startTime: string | null;
}

interface ProcessInfo extends ProcessId {
  ppid: number;
  pgrp: number;
  zombie: boolean;
}

function readProcLinux(): ProcessInfo[] {
  const list: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After the command name, which may hold spaces and parentheses: state, ppid, …, starttime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    list.push({
      pid: Number(entry),
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      zombie: fields[0] === 'Z',
      startTime: fields[19] ?? null,
    });
  }
  return list;
}

function readPs(): ProcessInfo[] {
  try {
    const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,lstart='], { encoding: 'utf8', timeout: 5000 });
    return out
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/u.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({
        pid: Number(m[1]),
        ppid: Number(m[2]),
        pgrp: -1,
        startTime: (m[3] ?? '').trim(),
        zombie: false,
      }));
  } catch {
    return [];
  }
}

function processes(): ProcessInfo[] {
  if (process.platform === 'linux') return readProcLinux();
  if (process.platform === 'win32') return [];
  return readPs();
}

/** The live processes of group `pgid` (Linux), its leader among them. */
export function groupMembers(pgid: number): ProcessId[] {
  if (process.platform !== 'linux') return [];
  return readProcLinux()
    .filter((p) => p.pgrp === pgid && !p.zombie)
    .map((p) => ({ pid: p.pid, startTime: p.startTime }));
}

/** Every live descendant of `root` (not `root` itself). */
export function descendantsOf(root: number): ProcessId[] {
  const all = processes();
  const children = new Map<number, ProcessInfo[]>();
  for (const p of all) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const found: ProcessId[] = [];
  const stack = [root];
  const seen = new Set<number>([root]);
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() as number) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      stack.push(child.pid);
      if (!child.zombie) found.push({ pid: child.pid, startTime: child.startTime });
    }
  }
  return found;
}

const inside = (child: string, parent: string) => {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/** Processes (of this user) working in `dir` or below it: Linux only, where /proc says. */
export function processesWorkingIn(dir: string): ProcessId[] {
  if (process.platform !== 'linux') return [];
  const found: ProcessId[] = [];
  for (const p of readProcLinux()) {
    if (p.zombie || p.pid === process.pid) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${p.pid}/cwd`);
    } catch {
      continue;
    }
    if (inside(cwd, dir)) found.push({ pid: p.pid, startTime: p.startTime });
  }
  return found;
}

/** Whether `p` still runs as the same process (not a reused pid). */
export function stillRunning(p: ProcessId): boolean {
  try {
    process.kill(p.pid, 0);
  } catch {
    return false;
  }
  if (p.startTime === null) return true;
  const now = processes().find((q) => q.pid === p.pid);
  return now !== undefined && !now.zombie && now.startTime === p.startTime;
}

/** Sends `signal` to each process that is still the one recorded. */
export function signalEach(list: ProcessId[], signal: NodeJS.Signals): void {
  for (const p of list) {
    if (!stillRunning(p)) continue;
    try {
      process.kill(p.pid, signal);
    } catch {
      /* gone meanwhile */
    }
  }
}
