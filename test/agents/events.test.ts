import { readsOf } from '../../src-main/store/sqljs-storage.js';
import { connect } from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FullSessionResponseSchema, SessionEventSchema } from '../../src-shared/index.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { startServe } from '../helpers/cli.js';
import { openEventStream } from '../helpers/events.js';
import { seedDataDir } from '../helpers/seed.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';

describe('live events', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentPaceMs: 0 });
    [owner, other] = await Promise.all([seedWorkspace(server, 'owner'), seedWorkspace(server, 'other')]);
  });
  afterAll(async () => server.dispose());

  it('streams a session as it happens, in order, and matches what GET returns', async () => {
    const stream = await openEventStream(`${server.url}/api/events`, { 'x-api-key': owner.apiKey });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Stream me',
    });
    await expect
      .poll(
        () =>
          stream.events.some(
            (e) =>
              e.event === 'message.added' &&
              (e.data as { message: { type: string } }).message.type === 'result',
          ),
        { timeout: 15_000 },
      )
      .toBe(true);
    await stream.close();

    const events = stream.events.map((e) => SessionEventSchema.parse(e.data));
    expect(events[0]).toMatchObject({ type: 'session.created', sessionId: created.id });
    const ids = stream.events.map((e) => Number(e.id?.split('-')[1]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const streamed = events.flatMap((e) => (e.type === 'message.added' ? [e] : []));
    expect(streamed.map((e) => e.index)).toEqual(streamed.map((_, i) => i));
    const { session } = FullSessionResponseSchema.parse(
      await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`)).json(),
    );
    expect(streamed.map((e) => e.message)).toEqual(session.messages);
    expect(events.some((e) => e.type === 'tasks.changed')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'session.updated', session: { status: 'completed' } });
  });

  it('resumes after Last-Event-ID with exactly what was missed', async () => {
    // Its own server, whose agent waits: the only events are the updates sent here.
    const quiet = await startTestServer();
    const owner = await seedWorkspace(quiet);
    const server = quiet;
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Resume me',
    });
    // Its run's start is told too: wait for it, so that the stream holds the updates alone.
    await expect
      .poll(async () => {
        const res = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}/summary`);
        return ((await res.json()) as { session: { agent?: string } }).session.agent;
      })
      .toBe('demo');
    const first = await openEventStream(`${server.url}/api/sessions/${created.id}/events`, {
      'x-api-key': owner.apiKey,
    });
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, { title: 'One' });
    await expect.poll(() => first.events.length).toBeGreaterThan(0);
    await first.close();
    const lastId = first.events.at(-1)!.id!;
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, { title: 'Two' });
    await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, { title: 'Three' });

    const resumed = await openEventStream(`${server.url}/api/sessions/${created.id}/events`, {
      'x-api-key': owner.apiKey,
      'last-event-id': lastId,
    });
    await expect.poll(() => resumed.events.length).toBeGreaterThanOrEqual(2);
    await resumed.close();
    const titles = resumed.events.map((e) => (e.data as { session?: { title: string } }).session?.title);
    expect(titles.slice(0, 2)).toEqual(['Two', 'Three']);
    expect(resumed.events.every((e) => Number(e.id!.split('-')[1]) > Number(lastId.split('-')[1]))).toBe(
      true,
    );

    const stale = await openEventStream(`${server.url}/api/events?lastEventId=0-1`, {
      'x-api-key': owner.apiKey,
    });
    await expect.poll(() => stale.events[0]?.event).toBe('reset');
    await stale.close();
    await quiet.dispose();
  });

  it('is authenticated like the other reads, and scoped to its workspace', async () => {
    expect((await fetch(`${server.url}/api/events`)).status).toBe(401);
    expect(
      (
        await fetch(`${server.url}/api/events?organizationId=${other.organizationId}`, {
          headers: { 'x-api-key': owner.apiKey },
        })
      ).status,
    ).toBe(403);
    const theirs = await createSession(server, other.user.cookie, { organizationId: other.organizationId });
    expect(
      (
        await fetch(`${server.url}/api/sessions/${theirs.id}/events`, {
          headers: { 'x-api-key': owner.apiKey },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await fetch(`${server.url}/api/sessions/ses_AAAAAAAAAAAAAAAAAAAAAA/events`, {
          headers: { 'x-api-key': owner.apiKey },
        })
      ).status,
    ).toBe(404);

    const mine = await openEventStream(`${server.url}/api/events`, { cookie: owner.user.cookie });
    expect(mine.response.status).toBe(200);
    await createSession(server, other.user.cookie, {
      organizationId: other.organizationId,
      initialMessage: 'not yours',
    });
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'yours',
    });
    await expect.poll(() => mine.events.length).toBeGreaterThan(0);
    await mine.close();
    const workspaceSessions = new Set(mine.events.map((e) => (e.data as { sessionId: string }).sessionId));
    for (const id of workspaceSessions) {
      const row = server.repos.sessions.find(id);
      expect(row?.workspaceId).toBe(owner.organizationId);
    }
  });

  it('refuses a foreign Host before anything else', async () => {
    const port = Number(new URL(server.url).port);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
      socket.write(
        `GET /api/events HTTP/1.1\r\nHost: evil.example:${port}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
      );
    });
    expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
  });

  it('ends open streams when the server shuts down', async () => {
    const own = await startTestServer();
    const seeded = await seedWorkspace(own);
    const stream = await openEventStream(`${own.url}/api/events`, { 'x-api-key': seeded.apiKey });
    expect(stream.response.status).toBe(200);
    await own.dispose();
    await expect.poll(() => stream.isClosed()).toBe(true);
  });
});

describe('restart', () => {
  it(
    'marks sessions whose agent was cut off by a crash as failed, saying why',
    { timeout: 60_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-restart-');
      try {
        const seeded = await seedDataDir(dataDir);
        const server = await startServe(dataDir, ['--log-level', 'silent'], {
          SESSIONDESK_DEMO_PACE_MS: '3600000',
        });
        const signIn = await fetch(`${server.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: seeded.email, password: seeded.password }),
        });
        const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
        const created = await fetch(`${server.url}/api/sessions`, {
          method: 'POST',
          headers: { cookie, origin: server.url, 'content-type': 'application/json' },
          body: JSON.stringify({
            organizationId: seeded.organizationId,
            initialMessage: 'Long running work',
          }),
        });
        const { session } = (await created.json()) as { session: { id: string } };
        await server.kill();

        const restarted = await startTestServer({ dataDir });
        try {
          const row = restarted.repos.sessions.find(session.id)!;
          expect(row.status).toBe('failed');
          const messages = await readAllMessages(readsOf(restarted.store), session.id);
          const last = messages.at(-1) as { type: string; result: string };
          expect(last).toMatchObject({ type: 'result', subtype: 'error' });
          expect(last.result).toContain('stopped while the agent was running');
          // The seeded session, which no agent was running, is untouched.
          expect(restarted.repos.sessions.find(seeded.transcriptSessionId)?.status).toBe('completed');
        } finally {
          await restarted.stop();
        }
        // And once recovered, nothing is marked running any more.
        const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
        expect(createRepositories(store.db).sessions.runningIds()).toEqual([]);
        await store.close();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});
