import { execFile } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
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

/** How often the starter is looked at. */
export const STARTER_CHECK_MS = 1000;

/**
 * npm's process, when this one runs as the command of `npx`, `npm exec` or `npm run`: npm runs
 * it through `sh -c`, a shell that neither passes npm's signals on (npm forwards SIGTERM and
 * SIGINT to the shell alone) nor ends when npm does; a shell that ran the command in its own
 * place (`exec`) leaves npm the parent itself. Told by the variables npm sets for its command
 * (inherited by whatever that command starts in turn) and by the parent's own command line:
 * the shell running npm's script, or npm, whose process title is `npm …`.
 */
async function npmOf(parent: number): Promise<{ npm: number; shell: number | null } | null> {
  const script = process.env.npm_lifecycle_script;
  if (!script) return null;
  const above = await describeProcess(parent);
  if (!above) return null;
  // npm appends the command's own arguments to its script: `sh -c 'sessiondesk serve --port 0'`.
  const ranByShell = /^\S+ -c (.*)$/su.exec(above.commandLine)?.[1];
  if (ranByShell?.startsWith(script)) return { npm: above.ppid, shell: parent };
  const execPath = process.env.npm_execpath;
  const isNpm =
    /^npm(?:\s|$)/u.test(above.commandLine) ||
    (execPath !== undefined && above.commandLine.includes(execPath));
  return isNpm ? { npm: parent, shell: null } : null;
}

/**
 * Whether `nohup` started this process from a terminal, asking it to outlive the terminal's
 * hang-up. Node sets every signal a process inherits as ignored back to its default before any
 * script runs (so SigIgn in /proc/self/status never shows nohup's SIGHUP here, and a Node
 * program under nohup dies of the hang-up like any other): what nohup leaves to see is its
 * redirections. At a terminal it reopens standard input from /dev/null write-only (GNU
 * coreutils) and appends standard output to `nohup.out`. Linux only (read from /proc); with all
 * three streams redirected by hand, nohup leaves no trace at all.
 */
export function startedByNohup(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stdinFlags = /^flags:\s*([0-7]+)$/mu.exec(readFileSync('/proc/self/fdinfo/0', 'utf8'))?.[1];
    const O_ACCMODE = 0o3;
    const O_WRONLY = 0o1;
    if (
      readlinkSync('/proc/self/fd/0') === '/dev/null' &&
      stdinFlags !== undefined &&
      (parseInt(stdinFlags, 8) & O_ACCMODE) === O_WRONLY
    ) {
      return true;
    }
    return basename(readlinkSync('/proc/self/fd/1')) === 'nohup.out';
  } catch {
    return false;
  }
}

/**
 * Resolves with the pid of npm, or of the shell it ran this process in, once either has gone
 * away (SIGKILL, a crash, SIGTERM that ended only the shell): then nothing else tells this
 * process that the `npx sessiondesk serve` it is was stopped. Never resolves when npm did not
 * start it: a server started in the background by a script, a terminal or `nohup` outlives
 * them, as a server should, until it is signalled. Checked every STARTER_CHECK_MS, from the call.
 */
export function npmGone(): Promise<number> {
  const parent = process.ppid;
  const npm = npmOf(parent);
  const goneNow = async (): Promise<number | null> => {
    const above = await npm;
    if (above === null) return null;
    // An orphan is handed to init (or a subreaper): its parent pid changes.
    if (process.ppid !== parent) return parent;
    if (above.shell !== null && (await describeProcess(above.shell))?.ppid !== above.npm) return above.npm;
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
    }, STARTER_CHECK_MS);
    // The watch alone never keeps the command running.
    timer.unref();
    void npm.then((above) => {
      if (above === null) clearInterval(timer);
    });
  });
}
