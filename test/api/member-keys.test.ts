import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeysResponseSchema } from '../../src-shared/accounts.js';
import {
  asUser,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  uniqueEmail,
  withKey,
  type TestServer,
} from '../helpers/server.js';

describe('removing a member', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
  });
  afterAll(() => server.dispose());

  it('revokes the API keys that member created there; the list says who created each key', async () => {
    const email = uniqueEmail('member');
    const added = await asUser(
      server,
      owner.user.cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/members`,
      {
        email,
        name: 'Mallory Member',
        password: PASSWORD,
      },
    );
    expect(added.status).toBe(201);
    const memberCookie = await signIn(server, email);
    const created = await asUser(
      server,
      memberCookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/keys`,
      {
        label: 'member script',
      },
    );
    expect(created.status).toBe(201);
    const memberKey = ((await created.json()) as { key: { key: string; id: string } }).key;
    expect((await withKey(server, memberKey.key, 'GET', '/api/sessions')).status).toBe(200);

    const listed = KeysResponseSchema.parse(
      await (
        await asUser(server, owner.user.cookie, 'GET', `/api/workspaces/${owner.organizationId}/keys`)
      ).json(),
    );
    const memberId = listed.keys.find((k) => k.id === memberKey.id)?.createdBy?.userId;
    expect(listed.keys.find((k) => k.id === memberKey.id)?.createdBy).toEqual({
      userId: memberId,
      name: 'Mallory Member',
    });

    const removed = await asUser(
      server,
      owner.user.cookie,
      'DELETE',
      `/api/workspaces/${owner.organizationId}/members/${memberId}`,
    );
    expect(removed.status).toBe(204);
    // The removed member's key stops working at once; the owner's own key does not.
    expect((await withKey(server, memberKey.key, 'GET', '/api/sessions')).status).toBe(401);
    expect((await withKey(server, owner.apiKey, 'GET', '/api/sessions')).status).toBe(200);
    const after = KeysResponseSchema.parse(
      await (
        await asUser(server, owner.user.cookie, 'GET', `/api/workspaces/${owner.organizationId}/keys`)
      ).json(),
    );
    expect(after.keys.map((k) => k.id)).not.toContain(memberKey.id);
  });
});
