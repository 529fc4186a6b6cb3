import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A process as the system describes it: its parent and its command line. */
interface ProcessInfo {
  ppid: number;
  commandLine: string;
}

/**
 * What the system says of process `pid`, or null once it is gone (or where neither `/proc` nor
 * `ps` answers, as on Windows).
 */
async function describeProcess(pid: number): Promise<ProcessInfo | null> {
  try {
    if (process.platform === 'linux') {
      const [stat, cmdline] = await Promise.all([
        readFile(`/proc/${pid}/stat`, 'utf8'),
        readFile(`/proc/${pid}/cmdline`, 'utf8'),
      ]);
      // Field 2 (the command name, in parentheses) may hold spaces and parentheses itself.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return { ppid, commandLine: cmdline.replace(/\0$/u, '').split('\0').join(' ') };
    }
    const { stdout } = await run('ps', ['-ww', '-o', 'ppid=', '-o', 'args=', '-p', String(pid)]);
    const match = /^\s*(\d+)\s+(.*)$/u.exec(stdout.trim());
    return match ? { ppid: Number(match[1]), commandLine: match[2]! } : null;
  } catch {
    return null;
  }
}

/**
 * The pid of npm when this process runs as the command of `npx`, `npm exec` or `npm run`:
 * npm runs it through `sh -c`, a shell that neither passes npm's signals on (npm forwards
 * SIGTERM and SIGINT to the shell alone) nor ends when npm does. Null otherwise, and when the
 * shell ran the command in its own place (`exec`), for then npm is the parent itself.
 */
async function npmAbove(parent: number): Promise<number | null> {
  const script = process.env.npm_lifecycle_script;
  if (!script) return null;
  const shell = await describeProcess(parent);
  if (!shell) return null;
  // npm appends the command's own arguments to its script: `sh -c 'sessiondesk' serve --port 0`.
  const ranByShell = /^\S+ -c (.*)$/su.exec(shell.commandLine)?.[1];
  return ranByShell?.startsWith(script) ? shell.ppid : null;
}

/**
 * Resolves with the pid of the process that started this one once it has gone away (SIGKILL, a
 * crash, a service manager stopping it): the parent, and npm too when npm started it through a
 * shell. Nothing else tells a server whose parent died; stdin cannot be relied on, as npm and
 * service managers hand it over in any state. Checked every second, from the call on.
 */
export function parentGone(): Promise<number> {
  const parent = process.ppid;
  const npm = npmAbove(parent);
  const goneNow = async (): Promise<number | null> => {
    // An orphan is handed to init (or a subreaper): its parent pid changes.
    if (process.ppid !== parent) return parent;
    const above = await npm;
    if (above !== null && (await describeProcess(parent))?.ppid !== above) return above;
    return null;
  };
  return new Promise((resolve) => {
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      void goneNow().then((pid) => {
        checking = false;
        if (pid === null) return;
        clearInterval(timer);
        resolve(pid);
      });
    }, 1000);
    // The watch alone never keeps the command running.
    timer.unref();
  });
}
