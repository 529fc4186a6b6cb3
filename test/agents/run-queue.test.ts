import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ListSessionsResponseSchema,
  SessionEventSchema,
  SessionResponseSchema,
} from '../../src-shared/index.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { openEventStream } from '../helpers/events.js';
import { release, transcript, waitForText, WAITING_AGENT } from '../helpers/run-control.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  type TestServer,
} from '../helpers/server.js';

describe('a limit of runs at once, with a queue', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentCommand: WAITING_AGENT, maxRuns: 2 });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  async function create(prompt: string) {
    const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
      organizationId: owner.organizationId,
      initialMessage: prompt,
    });
    expect(response.status).toBe(201);
    return SessionResponseSchema.parse(await response.json()).session;
  }

  it('queues runs past the limit in order, shows them, and starts them as places free up', async () => {
    const stream = await openEventStream(`${server.url}/api/events`, { 'x-api-key': owner.apiKey });
    const a = await create('First job');
    const b = await create('Second job');
    expect(a.agentState).toBe('running');
    await waitForText(server, owner.user.cookie, a.id, 'Working on: First job');
    await waitForText(server, owner.user.cookie, b.id, 'Working on: Second job');

    const c = await create('Third job');
    const d = await create('Fourth job');
    expect(c.agentState).toBe('queued');
    expect(d.agentState).toBe('queued');
    const list = ListSessionsResponseSchema.parse(
      await (
        await asUser(server, owner.user.cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
      ).json(),
    );
    const states = Object.fromEntries(list.sessions.map((s) => [s.title, s.agentState]));
    expect(states).toEqual({
      'First job': 'running',
      'Second job': 'running',
      'Third job': 'queued',
      'Fourth job': 'queued',
    });
    expect((await getSession(server, owner.user.cookie, c.id)).agentState).toBe('queued');

    // A follow-up to a queued session joins its prompt; the session keeps its place.
    const followUp = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${c.id}/messages`, {
      content: 'Add tests too',
    });
    expect(followUp.status).toBe(201);
    expect(SessionResponseSchema.parse(await followUp.json()).session.agentState).toBe('queued');

    // A queued session stopped leaves the queue, never having run.
    const stopped = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${d.id}/stop`);
    expect(stopped.status).toBe(200);
    const fourth = await getSession(server, owner.user.cookie, d.id);
    expect(fourth.status).toBe('completed');
    expect(fourth.agentState).toBeUndefined();
    expect(transcript(fourth)).toEqual(['user: Fourth job', 'result: Stopped by User owner.']);
    expect(fourth.messages.at(-1)).toMatchObject({ stopped: true, is_error: false });

    // Nothing of the third has run while two others do.
    expect(existsSync(join(sandboxPath(server.sandboxRoot, c.id), 'leader.pid'))).toBe(false);
    release(server.sandboxRoot, a.id);
    await waitForText(server, owner.user.cookie, c.id, 'Working on: Third job\n\nAdd tests too');
    const third = await getSession(server, owner.user.cookie, c.id);
    expect(third.agentState).toBe('running');
    expect(transcript(third).slice(0, 2)).toEqual(['user: Third job', 'user: Add tests too']);

    // The move from queued to running was published.
    await expect
      .poll(() =>
        stream.events
          .map((e) => SessionEventSchema.parse(e.data))
          .filter((e) => e.type === 'session.updated' && e.sessionId === c.id)
          .map((e) => (e.type === 'session.updated' ? e.session.agentState : undefined)),
      )
      .toEqual(expect.arrayContaining(['queued', 'running']));
    await stream.close();
    // The fourth never started.
    expect(existsSync(join(sandboxPath(server.sandboxRoot, d.id), 'leader.pid'))).toBe(false);

    release(server.sandboxRoot, b.id);
    release(server.sandboxRoot, c.id);
    expect((await waitForResults(server, owner.user.cookie, c.id)).status).toBe('completed');
    expect((await getSession(server, owner.user.cookie, c.id)).agentState).toBeUndefined();
  });

  it('a PATCH to completed takes a session out of the queue', async () => {
    const held = [await create('Hold one'), await create('Hold two')];
    for (const s of held) await waitForText(server, owner.user.cookie, s.id, `Working on: ${s.title}`);
    const queued = await create('Wait in line');
    expect(queued.agentState).toBe('queued');
    const patched = await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${queued.id}`, {
      status: 'completed',
    });
    expect(patched.status).toBe(200);
    const session = await getSession(server, owner.user.cookie, queued.id);
    expect(session.status).toBe('completed');
    expect(session.agentState).toBeUndefined();
    expect(transcript(session).at(-1)).toBe('result: Stopped: the session was marked completed.');
    for (const s of held) release(server.sandboxRoot, s.id);
    for (const s of held) await waitForResults(server, owner.user.cookie, s.id);
    expect(existsSync(join(sandboxPath(server.sandboxRoot, queued.id), 'leader.pid'))).toBe(false);
  });
});

describe('queued runs across a restart', () => {
  it('are queued again, in order, and run', { timeout: 60_000 }, async () => {
    const dataDir = tempDir('sessiondesk-queue-');
    try {
      const first = await startTestServer({ dataDir, agentCommand: WAITING_AGENT, maxRuns: 1 });
      const owner = await seedWorkspace(first);
      const running = await createSession(first, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Running when stopped',
      });
      await waitForText(first, owner.user.cookie, running.id, 'Working on: Running when stopped');
      const waiting = await createSession(first, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Queued when stopped',
      });
      expect(waiting.agentState).toBe('queued');
      const behind = await createSession(first, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Queued behind it',
      });
      expect(behind.agentState).toBe('queued');
      await first.stop();

      const second = await startTestServer({ dataDir, agentCommand: WAITING_AGENT, maxRuns: 1 });
      try {
        const interrupted = await getSession(second, owner.user.cookie, running.id);
        expect(interrupted.status).toBe('failed');
        expect(transcript(interrupted).at(-1)).toBe(
          'result: Session Desk was stopped while the agent was running.',
        );
        await waitForText(second, owner.user.cookie, waiting.id, 'Working on: Queued when stopped');
        expect((await getSession(second, owner.user.cookie, behind.id)).agentState).toBe('queued');
        release(second.sandboxRoot, waiting.id);
        expect((await waitForResults(second, owner.user.cookie, waiting.id)).status).toBe('completed');
        await waitForText(second, owner.user.cookie, behind.id, 'Working on: Queued behind it');
        release(second.sandboxRoot, behind.id);
        expect((await waitForResults(second, owner.user.cookie, behind.id)).status).toBe('completed');
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
    }
  });
});
