import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionEventSchema } from '../../src-shared/index.js';
import { openEventStream } from '../helpers/events.js';
import { createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let owner: Awaited<ReturnType<typeof seedWorkspace>>;
beforeAll(async () => {
  // The demo agent's steps are an hour apart: nothing the run writes can tell the agent.
  server = await startTestServer();
  owner = await seedWorkspace(server);
});
afterAll(async () => server.dispose());

// A client may read a session before its run starts (a team server answers the create first):
// the run's start itself must tell it which agent works on the session, in which sandbox.
it('tells which agent works on a session when its run starts, before the run says anything', async () => {
  const stream = await openEventStream(`${server.url}/api/events`, { 'x-api-key': owner.apiKey });
  const created = await createSession(server, owner.user.cookie, {
    organizationId: owner.organizationId,
    initialMessage: 'Name the agent',
  });
  const started = () =>
    stream.events
      .map((e) => SessionEventSchema.parse(e.data))
      .find((e) => e.type === 'session.updated' && e.sessionId === created.id && e.session.agent === 'demo');
  await expect.poll(started, { timeout: 10_000 }).toMatchObject({
    session: { agent: 'demo', agentState: 'running' },
  });
  const events = stream.events.map((e) => SessionEventSchema.parse(e.data));
  await stream.close();
  // Nothing but the prompt itself was written: the news came from the start, not a message.
  expect(events.filter((e) => e.type === 'message.added').map((e) => e.message.type)).toEqual(['user']);
});
