import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import type { SessionFull } from '../../src-shared/index.js';
import { getSession } from './agent-runs.js';
import { ROOT } from './cli.js';
import type { TestServer } from './server.js';

/** An agent that waits for `release` in its sandbox: test/fixtures/waiting-agent.mjs. */
export const WAITING_AGENT = [
  process.execPath,
  join(ROOT, 'test', 'fixtures', 'waiting-agent.mjs'),
  '{prompt}',
];

/**
 * A pid the waiting agent left in its sandbox (`leader` or `child`), once it is there, as this
 * machine knows it. In an operating-system sandbox the agent sees the pids of a namespace of its
 * own: the process is found by that pid (the last of its `NSpid`) and the session's id in its
 * environment.
 */
export async function agentPid(sandboxRoot: string, sessionId: string, which: 'leader' | 'child') {
  const file = join(sandboxPath(sandboxRoot, sessionId), `${which}.pid`);
  await expect
    .poll(() => existsSync(file) && readFileSync(file, 'utf8') !== '', { timeout: 20_000 })
    .toBe(true);
  const seen = Number(readFileSync(file, 'utf8'));
  if (process.platform !== 'linux') return seen;
  const found = runProcesses(sessionId).find((p) => p.nsPid === seen);
  if (!found) throw new Error(`no process of session ${sessionId} has the pid ${seen} in its namespace`);
  return found.pid;
}

/**
 * The processes running for a session (Linux): those whose environment names it, as every
 * process of a run inherits SESSIONDESK_SESSION_ID; with their pid here and in their namespace.
 */
export function runProcesses(sessionId: string): { pid: number; nsPid: number; cmdline: string }[] {
  const found: { pid: number; nsPid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (!environ.includes(`SESSIONDESK_SESSION_ID=${sessionId}`)) continue;
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^State:\s+Z/mu.test(status)) continue;
      const nsPids = (/^NSpid:\s+(.*)$/mu.exec(status)?.[1] ?? entry).trim().split(/\s+/u);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid: Number(entry), nsPid: Number(nsPids.at(-1)), cmdline });
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

/** Lets the waiting agent of a session finish. */
export function release(sandboxRoot: string, sessionId: string): void {
  writeFileSync(join(sandboxPath(sandboxRoot, sessionId), 'release'), '');
}

/**
 * Whether a process has ended, read from /proc/<pid>/stat here rather than with the product's
 * own check (the code under test): ended when the file is gone or its state is Z or X. Where
 * nothing reaps orphans (pid 1 of some containers), a killed grandchild stays a zombie: ended,
 * yet `kill(pid, 0)` still finds it. Elsewhere than Linux, `kill(pid, 0)` finding no process.
 */
export function ended(pid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH')
      return true;
    throw err;
  }
  // "pid (comm) state …": comm may hold spaces and parentheses, so the state follows the last ")".
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (!/^[A-Za-z]$/u.test(state)) throw new Error(`no process state in /proc/${pid}/stat: ${stat}`);
  return state === 'Z' || state === 'X';
}

/** The text of each message, in order: a user's content, an assistant's text, a result's result. */
export function transcript(session: SessionFull): string[] {
  return session.messages.map((m) =>
    m.type === 'user'
      ? `user: ${m.message.content}`
      : m.type === 'result'
        ? `result: ${m.result}`
        : `assistant: ${m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' ')}`,
  );
}

/** Polls until the session's transcript holds a message with this text. */
export async function waitForText(server: TestServer, cookie: string, id: string, text: string) {
  await expect
    .poll(async () => transcript(await getSession(server, cookie, id)).some((t) => t.endsWith(text)), {
      timeout: 20_000,
    })
    .toBe(true);
}
