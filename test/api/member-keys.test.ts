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

describe('revoking a key', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
  });
  afterAll(() => server.dispose());

  async function addMember(name: string): Promise<string> {
    const email = uniqueEmail(name);
    const added = await asUser(
      server,
      owner.user.cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/members`,
      {
        email,
        name,
        password: PASSWORD,
      },
    );
    expect(added.status).toBe(201);
    return signIn(server, email);
  }
  async function makeKey(cookie: string, label: string): Promise<{ key: string; id: string }> {
    const created = await asUser(server, cookie, 'POST', `/api/workspaces/${owner.organizationId}/keys`, {
      label,
    });
    expect(created.status).toBe(201);
    return ((await created.json()) as { key: { key: string; id: string } }).key;
  }
  const revoke = (cookie: string, id: string) =>
    asUser(server, cookie, 'DELETE', `/api/workspaces/${owner.organizationId}/keys/${id}`);

  it('lets a member revoke only the keys they made, and an owner any key of the workspace', async () => {
    const alice = await addMember('Alice');
    const bob = await addMember('Bob');
    const ownersScript = await makeKey(owner.user.cookie, 'release script');
    const alicesLaptop = await makeKey(alice, "Alice's laptop");
    const bobsLaptop = await makeKey(bob, "Bob's laptop");

    // The administrator's key (made on the command line), the owner's and a colleague's stay.
    for (const id of [owner.keyId, ownersScript.id, bobsLaptop.id]) {
      const refused = await revoke(alice, id);
      expect(refused.status, id).toBe(403);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
        'ask an owner',
      );
    }
    expect((await withKey(server, owner.apiKey, 'GET', '/api/sessions')).status).toBe(200);
    expect((await withKey(server, ownersScript.key, 'GET', '/api/sessions')).status).toBe(200);
    expect((await withKey(server, bobsLaptop.key, 'GET', '/api/sessions')).status).toBe(200);

    expect((await revoke(alice, alicesLaptop.id)).status).toBe(204);
    expect((await withKey(server, alicesLaptop.key, 'GET', '/api/sessions')).status).toBe(401);
    expect((await revoke(owner.user.cookie, bobsLaptop.id)).status).toBe(204);
    expect((await withKey(server, bobsLaptop.key, 'GET', '/api/sessions')).status).toBe(401);
    // A key that does not exist is the same 404 for a member as for an owner.
    expect((await revoke(alice, 'key_doesnotexist0000000000')).status).toBe(404);
  });
});
