import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import {
  postgresApiKeys,
  postgresAuthSessions,
  postgresUsers,
  postgresWorkspaces,
} from '../../src-main/store-postgres/accounts.js';
import {
  postgresIdentities,
  postgresInvitations,
  postgresSignInFlows,
} from '../../src-main/store-postgres/identities.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Repos } from '../../src-main/store/storage.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { eachCallAWrite, useSqlJsStore } from '../helpers/storage.js';

type Accounts = Pick<
  Repos,
  'users' | 'workspaces' | 'authSessions' | 'apiKeys' | 'signInFlows' | 'identities' | 'invitations'
>;

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();

/**
 * The same questions to the accounts' repositories on either database, with the same answers:
 * users, workspaces with their members and settings, sign-ins and API keys, sign-ins through an
 * identity provider, the identities linked to accounts, and invitations.
 */
function accountsContract(open: () => Promise<{ repos: Accounts; prefix: string }>) {
  let repos: Accounts;
  let id: (name: string) => string;
  beforeAll(async () => {
    const opened = await open();
    repos = opened.repos;
    id = (name) => `${name}_${opened.prefix}`;
  });

  it('keeps users, found by id and by any case of their email, and counts them', async () => {
    await repos.users.insert({
      id: id('usr_ada'),
      email: `ada-${id('x')}@example.com`,
      name: 'Ada',
      passwordHash: 'h1',
      createdAt: AT,
    });
    await repos.users.insert({
      id: id('usr_bob'),
      email: `bob-${id('x')}@example.com`,
      name: 'Bob',
      imageUrl: 'https://example.com/bob.png',
      passwordHash: 'h2',
      createdAt: later(1),
    });
    expect(await repos.users.findByEmail(`ADA-${id('x')}@EXAMPLE.COM`.toLowerCase())).toMatchObject({
      id: id('usr_ada'),
      name: 'Ada',
    });
    expect(await repos.users.findById(id('usr_bob'))).toEqual({
      id: id('usr_bob'),
      email: `bob-${id('x')}@example.com`,
      name: 'Bob',
      imageUrl: 'https://example.com/bob.png',
      passwordHash: 'h2',
      createdAt: later(1),
    });
    expect(await repos.users.findById('usr_nobody')).toBeNull();
    await repos.users.setPasswordHash(id('usr_ada'), 'h3');
    expect((await repos.users.findById(id('usr_ada')))?.passwordHash).toBe('h3');
    expect(await repos.users.count()).toBe(2);
    expect((await repos.users.firstCreated([`ada-${id('x')}@example.com`]))?.id).toBe(id('usr_bob'));
    expect((await repos.users.firstCreated([]))?.id).toBe(id('usr_ada'));
  });

  it('keeps workspaces, their members in the order they joined, their owners and settings', async () => {
    await repos.workspaces.insert({ id: id('org_a'), name: 'A', createdAt: AT });
    expect(await repos.workspaces.addMember(id('org_a'), id('usr_ada'), 'owner', AT)).toBe(true);
    expect(await repos.workspaces.addMember(id('org_a'), id('usr_bob'), 'member', later(2))).toBe(true);
    expect(await repos.workspaces.addMember(id('org_a'), id('usr_bob'), 'owner', later(3))).toBe(false);
    expect(await repos.workspaces.role(id('org_a'), id('usr_bob'))).toBe('member');
    expect(await repos.workspaces.ownerCount(id('org_a'))).toBe(1);
    expect((await repos.workspaces.members(id('org_a'))).map((m) => [m.userId, m.role, m.joinedAt])).toEqual([
      [id('usr_ada'), 'owner', AT],
      [id('usr_bob'), 'member', later(2)],
    ]);
    expect(await repos.workspaces.listForUser(id('usr_bob'))).toEqual([
      { organizationId: id('org_a'), name: 'A', role: 'member' },
    ]);
    expect(await repos.workspaces.settings(id('org_a'))).toBeNull();
    await repos.workspaces.putSettings(id('org_a'), {
      agent: 'command',
      commandName: 'ours',
      timeoutMs: 60_000,
      allowedHosts: ['api.example.com'],
      approvals: 'ask',
      approvalTimeoutSeconds: 90,
    });
    expect(await repos.workspaces.settings(id('org_a'))).toEqual({
      agent: 'command',
      commandName: 'ours',
      timeoutMs: 60_000,
      allowedHosts: ['api.example.com'],
      approvals: 'ask',
      approvalTimeoutSeconds: 90,
    });
    await repos.workspaces.putSettings(id('org_a'), { agent: 'acp', acpAgent: 'gemini' });
    expect(await repos.workspaces.settings(id('org_a'))).toEqual({ agent: 'acp', acpAgent: 'gemini' });
    expect(await repos.workspaces.removeMember(id('org_a'), id('usr_bob'))).toBe(true);
    expect(await repos.workspaces.removeMember(id('org_a'), id('usr_bob'))).toBe(false);
    expect(await repos.workspaces.role(id('org_a'), id('usr_bob'))).toBeNull();
  });

  it("keeps sign-ins by their token hash, and ends them one, a user's, or the expired", async () => {
    const session = (minutes: number) => ({
      userId: id('usr_ada'),
      createdAt: AT,
      lastSeenAt: AT,
      expiresAt: later(minutes),
    });
    await repos.authSessions.insert(id('hash1'), session(60));
    await repos.authSessions.insert(id('hash2'), session(1));
    await repos.authSessions.insert(id('hash3'), session(60));
    await repos.authSessions.touch(id('hash1'), later(5));
    expect(await repos.authSessions.find(id('hash1'))).toEqual({ ...session(60), lastSeenAt: later(5) });
    await repos.authSessions.deleteExpired(later(30));
    expect(await repos.authSessions.find(id('hash2'))).toBeNull();
    await repos.authSessions.delete(id('hash1'));
    expect(await repos.authSessions.find(id('hash1'))).toBeNull();
    await repos.authSessions.deleteForUser(id('usr_ada'));
    expect(await repos.authSessions.find(id('hash3'))).toBeNull();
  });

  it('keeps API keys by hash, newest first, and revokes one or all a member made', async () => {
    const key = (n: number, extra: { canApprove?: true; pushOnly?: true } = {}) => ({
      id: id(`key_${n}`),
      workspaceId: id('org_a'),
      keyHash: id(`keyhash_${n}`),
      prefix: `sdk_${n}`,
      label: `key ${n}`,
      createdAt: later(10 + n),
      createdBy: n === 3 ? null : id('usr_ada'),
      ...extra,
    });
    await repos.apiKeys.insert(key(1, { canApprove: true }));
    await repos.apiKeys.insert(key(2, { pushOnly: true }));
    await repos.apiKeys.insert(key(3));
    expect(await repos.apiKeys.findByHash(id('keyhash_1'))).toEqual({
      id: id('key_1'),
      workspaceId: id('org_a'),
      prefix: 'sdk_1',
      label: 'key 1',
      createdAt: later(11),
      createdBy: { userId: id('usr_ada'), name: 'Ada' },
      canApprove: true,
    });
    expect((await repos.apiKeys.findById(id('key_2')))?.pushOnly).toBe(true);
    expect((await repos.apiKeys.findById(id('key_3')))?.createdBy).toBeUndefined();
    expect((await repos.apiKeys.list(id('org_a'))).map((k) => k.id)).toEqual([
      id('key_3'),
      id('key_2'),
      id('key_1'),
    ]);
    await repos.apiKeys.touch(id('key_3'), later(20));
    expect((await repos.apiKeys.findById(id('key_3')))?.lastUsedAt).toBe(later(20));
    expect(await repos.apiKeys.revoke(id('org_a'), id('key_3'), later(21))).toBe(true);
    expect(await repos.apiKeys.revoke(id('org_a'), id('key_3'), later(22))).toBe(false);
    expect(await repos.apiKeys.isActive(id('key_3'))).toBe(false);
    expect(await repos.apiKeys.revokeCreatedBy(id('org_a'), id('usr_ada'), later(23))).toBe(2);
    expect(await repos.apiKeys.list(id('org_a'))).toEqual([]);
    expect((await repos.apiKeys.findById(id('key_1')))?.revokedAt).toBe(later(23));
  });

  it('keeps sign-ins through an identity provider until taken once, or expired', async () => {
    const flow = (n: number, expiresAt: string) => ({
      handleHash: id(`handle_${n}`),
      stateHash: `state-${n}`,
      nonce: `nonce-${n}`,
      codeVerifier: `verifier-${n}`,
      redirectUri: 'https://desk.example.com/api/auth/oidc/callback',
      returnTo: `/sessions/${n}`,
      createdAt: AT,
      expiresAt,
    });
    await repos.signInFlows.insert(flow(1, later(10)));
    await repos.signInFlows.insert(flow(2, later(10)));
    await repos.signInFlows.insert(flow(3, later(1)));
    expect(await repos.signInFlows.countActive(later(5))).toBe(2);
    expect(await repos.signInFlows.take(id('handle_1'), later(5))).toEqual(flow(1, later(10)));
    // Used once: a second answer finds nothing.
    expect(await repos.signInFlows.take(id('handle_1'), later(5))).toBeNull();
    // Expired: gone as it is taken, and answered as nothing.
    expect(await repos.signInFlows.take(id('handle_2'), later(11))).toBeNull();
    expect(await repos.signInFlows.countActive(AT)).toBe(1);
    expect(await repos.signInFlows.deleteExpired(later(2))).toBe(1);
    expect(await repos.signInFlows.countActive(AT)).toBe(0);
  });

  it('links an account to its identity at a provider, one per provider, and finds it either way', async () => {
    const issuer = `https://id.example.com/${id('x')}`;
    const link = { issuer, subject: 'sub-ada', userId: id('usr_ada'), createdAt: AT };
    await repos.identities.insert(link);
    expect(await repos.identities.find(issuer, 'sub-ada')).toEqual(link);
    expect(await repos.identities.find(issuer, 'sub-other')).toBeNull();
    expect(await repos.identities.find(`${issuer}/other`, 'sub-ada')).toBeNull();
    expect(await repos.identities.forUser(id('usr_ada'), issuer)).toEqual(link);
    expect(await repos.identities.forUser(id('usr_bob'), issuer)).toBeNull();
    // A second identity of the same account at the same provider is refused by the schema.
    await expect(repos.identities.insert({ ...link, subject: 'sub-ada-2' })).rejects.toThrow();
  });

  it('keeps invitations by workspace and email, oldest first, with who invited', async () => {
    await repos.workspaces.insert({ id: id('org_inv'), name: 'Inv', createdAt: AT });
    await repos.workspaces.insert({ id: id('org_inv2'), name: 'Inv 2', createdAt: AT });
    const email = `sam-${id('x')}@example.com`;
    expect(
      await repos.invitations.insert({
        workspaceId: id('org_inv'),
        email,
        invitedBy: id('usr_ada'),
        createdAt: later(1),
      }),
    ).toBe(true);
    expect(
      await repos.invitations.insert({
        workspaceId: id('org_inv'),
        email,
        invitedBy: null,
        createdAt: later(2),
      }),
    ).toBe(false);
    await repos.invitations.insert({
      workspaceId: id('org_inv2'),
      email,
      invitedBy: null,
      createdAt: later(3),
    });
    await repos.invitations.insert({
      workspaceId: id('org_inv'),
      email: `al-${id('x')}@example.com`,
      invitedBy: null,
      createdAt: later(1),
    });
    expect(await repos.invitations.list(id('org_inv'))).toEqual([
      { workspaceId: id('org_inv'), email: `al-${id('x')}@example.com`, createdAt: later(1) },
      {
        workspaceId: id('org_inv'),
        email,
        invitedBy: { userId: id('usr_ada'), name: 'Ada' },
        createdAt: later(1),
      },
    ]);
    expect((await repos.invitations.forEmail(email.toUpperCase())).map((i) => i.workspaceId)).toEqual([
      id('org_inv'),
      id('org_inv2'),
    ]);
    expect(await repos.invitations.delete(id('org_inv'), email)).toBe(true);
    expect(await repos.invitations.delete(id('org_inv'), email)).toBe(false);
    expect((await repos.invitations.forEmail(email)).map((i) => i.workspaceId)).toEqual([id('org_inv2')]);
  });

  it('knows which user was made first, also of two made within one millisecond', async () => {
    const before = new Date(Date.parse(AT) - 60_000).toISOString();
    // The later id first: the order they were made in decides, not their ids.
    for (const name of ['usr_zed', 'usr_amy']) {
      await repos.users.insert({
        id: id(name),
        email: `${name}-${id('x')}@example.com`,
        name,
        passwordHash: 'h',
        createdAt: before,
      });
    }
    expect((await repos.users.firstCreated([]))?.id).toBe(id('usr_zed'));
    expect((await repos.users.firstCreated([`usr_zed-${id('x')}@example.com`]))?.id).toBe(id('usr_amy'));
  });
}

describe('the accounts repositories on sql.js', () => {
  const sqljs = useSqlJsStore('sessiondesk-accounts-');
  accountsContract(async () => {
    return { repos: eachCallAWrite(storageOf(await sqljs.open())), prefix: 'sqljs' };
  });
});

describe('the accounts repositories on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  let sql: Sql | undefined;
  afterAll(async () => sql?.end());
  accountsContract(async () => {
    sql = await migratedPool(pg.url());
    return {
      repos: {
        users: postgresUsers(sql),
        workspaces: postgresWorkspaces(sql),
        authSessions: postgresAuthSessions(sql),
        apiKeys: postgresApiKeys(sql),
        signInFlows: postgresSignInFlows(sql),
        identities: postgresIdentities(sql),
        invitations: postgresInvitations(sql),
      },
      prefix: 'pg',
    };
  });
});
