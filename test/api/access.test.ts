import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from '../helpers/events.js';
import { asUser, createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

/** The JSON routes and the event streams answer the same question the same way. */
describe('one set of access rules for every route', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let secondOrg: string;

  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
    secondOrg = (await server.accounts.createWorkspace({ name: 'Second', ownerEmail: owner.user.email }))
      .organizationId;
  });
  afterAll(async () => server.dispose());

  it('a member of several workspaces without organizationId: 400 organization_required on list and stream', async () => {
    for (const path of ['/api/sessions', '/api/events']) {
      const response = await asUser(server, owner.user.cookie, 'GET', path);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'organization_required',
      );
    }
  });

  it('a session asked for with another workspace in organizationId: 403 on get and on its stream, for cookie users too', async () => {
    const session = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    for (const path of [`/api/sessions/${session.id}`, `/api/sessions/${session.id}/events`]) {
      const response = await asUser(server, owner.user.cookie, 'GET', `${path}?organizationId=${secondOrg}`);
      expect(response.status, path).toBe(403);
      await response.body?.cancel();
    }
    const stream = await openEventStream(
      `${server.url}/api/sessions/${session.id}/events?organizationId=${owner.organizationId}`,
      { cookie: owner.user.cookie },
    );
    expect(stream.response.status).toBe(200);
    await stream.close();
  });
});
