import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { bootId, startTimeOf } from '../../src-main/store/lock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { getSession } from '../helpers/agent-runs.js';
import { startServe } from '../helpers/cli.js';
import { agentPid, ended, transcript, waitForText, WAITING_AGENT } from '../helpers/run-control.js';
import { seedDataDir } from '../helpers/seed.js';
import { createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';
import { skipWithReason } from '../helpers/require-tools.js';

const linux = process.platform === 'linux';

const linuxOnly = skipWithReason(linux ? null : 'it reads /proc: Linux only');

describe('agents left running by a crash of the server', linuxOnly, () => {
  it('are ended by the next start, which then marks their sessions', { timeout: 90_000 }, async () => {
    const dataDir = tempDir('sessiondesk-orphans-');
    const sandboxRoot = defaultSandboxRoot(dataDir);
    try {
      const seeded = await seedDataDir(dataDir);
      // Without the operating-system sandbox, in which agents end with the server (see
      // os-sandbox.test.ts): here they outlive it, and the next start must end them.
      const env = {
        SESSIONDESK_AGENT_COMMAND: JSON.stringify(WAITING_AGENT),
        SESSIONDESK_OS_SANDBOX: 'off',
      };
      const server = await startServe(dataDir, ['--log-level', 'silent'], env);
      const signIn = await fetch(`${server.url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: seeded.email, password: seeded.password }),
      });
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      const created = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie, origin: server.url, 'content-type': 'application/json' },
        body: JSON.stringify({ organizationId: seeded.organizationId, initialMessage: 'Outlive the server' }),
      });
      const { session } = (await created.json()) as { session: { id: string } };
      const leader = await agentPid(sandboxRoot, session.id, 'leader');
      const child = await agentPid(sandboxRoot, session.id, 'child');
      const byUrl = { url: server.url, origin: server.url, sandboxRoot } as Parameters<typeof waitForText>[0];
      await waitForText(byUrl, cookie, session.id, 'Working on: Outlive the server');

      await server.kill();
      // The agent outlives the server that started it.
      expect(ended(leader)).toBe(false);
      expect(ended(child)).toBe(false);

      const restarted = await startServe(dataDir, ['--log-level', 'silent'], env);
      try {
        expect(ended(leader)).toBe(true);
        expect(ended(child)).toBe(true);
        const after = await getSession(
          { ...byUrl, url: restarted.url, origin: restarted.url },
          cookie,
          session.id,
        );
        expect(after.status).toBe('failed');
        expect(after.agentState).toBeUndefined();
        expect(transcript(after).at(-1)).toBe(
          'result: Session Desk stopped unexpectedly while the agent was running; the agent, still running, was ended. Send a follow-up to resume.',
        );
      } finally {
        await restarted.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(sandboxRoot, { recursive: true, force: true });
    }
  });

  it('a recorded process group whose leader is not the one recorded is left alone', async () => {
    const dataDir = tempDir('sessiondesk-orphans-');
    // Two programs in groups of their own: one recorded as it is, one with another start time
    // (as a pid given to another program since would have).
    const sleepers = [0, 1].map(() => spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' }));
    const [ours, reused] = sleepers.map((s) => s.pid!) as [number, number];
    try {
      const first = await startTestServer({ dataDir });
      const owner = await seedWorkspace(first);
      const a = await createSession(first, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'One',
      });
      const b = await createSession(first, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Two',
      });
      await first.stop();

      const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
      const repos = createRepositories(store.db);
      const boot = bootId()!;
      await store.write(() => {
        repos.runs.recordProcess(
          { sessionId: a.id, pgid: ours, startTime: startTimeOf(ours)!, bootId: boot },
          'then',
        );
        repos.runs.recordProcess({ sessionId: b.id, pgid: reused, startTime: '1', bootId: boot }, 'then');
      });
      await store.close();

      const second = await startTestServer({ dataDir });
      try {
        expect(ended(ours)).toBe(true);
        expect(ended(reused)).toBe(false);
        expect(second.repos.runs.processes()).toEqual([]);
      } finally {
        await second.stop();
      }
    } finally {
      for (const s of sleepers) s.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
      await rm(defaultSandboxRoot(dataDir), { recursive: true, force: true });
    }
  });
});
