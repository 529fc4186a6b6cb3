import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_LIMITS } from '../../src-main/server/routes/events.js';
import { openEventStream } from '../helpers/events.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  signIn,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

type Stream = Awaited<ReturnType<typeof openEventStream>>;

describe('event streams end with their credentials', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ eventStreamMaxMs: 60 * 60 * 1000 });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  const workspaceStream = (headers: Record<string, string>) =>
    openEventStream(`${server.url}/api/events?organizationId=${owner.organizationId}`, headers);

  async function receivesSomething(stream: Stream) {
    const before = stream.events.length;
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'x',
    });
    await expect.poll(() => stream.events.length).toBeGreaterThan(before);
  }

  it('revoking the key ends its stream at once', async () => {
    const key = await server.accounts.createKey({ organizationId: owner.organizationId, label: 'stream' });
    const stream = await workspaceStream({ 'x-api-key': key.key });
    expect(stream.response.status).toBe(200);
    await receivesSomething(stream);
    const revoked = await asUser(
      server,
      owner.user.cookie,
      'DELETE',
      `/api/workspaces/${owner.organizationId}/keys/${key.id}`,
    );
    expect(revoked.status).toBe(204);
    await expect.poll(() => stream.isClosed(), { timeout: 1000 }).toBe(true);
    await stream.close();
  });

  it('removing the member ends their stream at once', async () => {
    const member = await seedWorkspace(server, 'leaving');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    const stream = await workspaceStream({ cookie: member.user.cookie });
    expect(stream.response.status).toBe(200);
    await receivesSomething(stream);
    const removed = await asUser(
      server,
      owner.user.cookie,
      'DELETE',
      `/api/workspaces/${owner.organizationId}/members/${member.user.userId}`,
    );
    expect(removed.status).toBe(204);
    await expect.poll(() => stream.isClosed(), { timeout: 1000 }).toBe(true);
    const count = stream.events.length;
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'y',
    });
    expect(stream.events.length).toBe(count);
    await stream.close();
  });

  it('signing out ends the streams of that sign-in at once', async () => {
    const cookie = await signIn(server, owner.user.email);
    const stream = await openEventStream(`${server.url}/api/events?organizationId=${owner.organizationId}`, {
      cookie,
    });
    expect(stream.response.status).toBe(200);
    const out = await asUser(server, cookie, 'POST', '/api/auth/sign-out');
    expect(out.status).toBe(204);
    await expect.poll(() => stream.isClosed(), { timeout: 1000 }).toBe(true);
    await stream.close();
  });

  it('a stream has a maximum lifetime', async () => {
    const short = await startTestServer({ eventStreamMaxMs: 1000 });
    try {
      const them = await seedWorkspace(short);
      const stream = await openEventStream(`${short.url}/api/events`, { 'x-api-key': them.apiKey });
      expect(stream.response.status).toBe(200);
      await expect.poll(() => stream.isClosed(), { timeout: 5000 }).toBe(true);
      await stream.close();
    } finally {
      await short.dispose();
    }
  });
});

describe('event-stream slots are shared fairly', () => {
  let server: TestServer;
  const opened: Stream[] = [];
  afterAll(async () => {
    for (const stream of opened) await stream.close();
    await server.dispose();
  });
  beforeAll(async () => {
    server = await startTestServer();
  });

  it('one key cannot take every slot: past its own cap it gets 429, and other workspaces still get streams', async () => {
    const greedy = await seedWorkspace(server, 'greedy');
    const other = await seedWorkspace(server, 'other');
    for (let i = 0; i < STREAM_LIMITS.perPrincipal; i += 1) {
      const stream = await openEventStream(`${server.url}/api/events`, { 'x-api-key': greedy.apiKey });
      expect(stream.response.status).toBe(200);
      opened.push(stream);
    }
    const refused = await fetch(`${server.url}/api/events`, { headers: { 'x-api-key': greedy.apiKey } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    const theirs = await openEventStream(`${server.url}/api/events`, { 'x-api-key': other.apiKey });
    expect(theirs.response.status).toBe(200);
    opened.push(theirs);

    // Many keys of one workspace fill only that workspace's share.
    let refusedForWorkspace = false;
    for (let k = 0; k < 4 && !refusedForWorkspace; k += 1) {
      const key = await server.accounts.createKey({ organizationId: greedy.organizationId, label: `k${k}` });
      for (let i = 0; i < STREAM_LIMITS.perPrincipal; i += 1) {
        const response = await openEventStream(`${server.url}/api/events`, { 'x-api-key': key.key });
        opened.push(response);
        if (response.response.status === 429) {
          refusedForWorkspace = true;
          break;
        }
        expect(response.response.status).toBe(200);
      }
    }
    expect(refusedForWorkspace).toBe(true);
    const still = await openEventStream(`${server.url}/api/events`, { 'x-api-key': other.apiKey });
    expect(still.response.status).toBe(200);
    opened.push(still);
  });
});
