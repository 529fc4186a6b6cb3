import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox.js';
import { processEnded } from '../../src-main/agents/process-group.js';
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

/** A pid the waiting agent left in its sandbox (`leader` or `child`), once it is there. */
export async function agentPid(sandboxRoot: string, sessionId: string, which: 'leader' | 'child') {
  const file = join(sandboxPath(sandboxRoot, sessionId), `${which}.pid`);
  await expect
    .poll(() => existsSync(file) && readFileSync(file, 'utf8') !== '', { timeout: 20_000 })
    .toBe(true);
  return Number(readFileSync(file, 'utf8'));
}

/** Lets the waiting agent of a session finish. */
export function release(sandboxRoot: string, sessionId: string): void {
  writeFileSync(join(sandboxPath(sandboxRoot, sessionId), 'release'), '');
}

/**
 * Whether a process has ended. Where nothing reaps orphans (pid 1 of some containers), a
 * killed grandchild stays a zombie: ended, yet `kill(pid, 0)` still finds it.
 */
export const ended = (pid: number) => processEnded(pid);

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
