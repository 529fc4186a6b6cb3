import type {
  AgentSettings,
  ApiKeySummary,
  CreatedApiKey,
  Invitation,
  User,
  Workspace,
} from '../../src-shared/accounts.js';
import type { Clock } from '../clock.js';
import { ownAccountCount } from '../demo/people.js';
import { AppError, conflict, forbidden, notFound } from '../errors.js';
import type { ApiKeyRecord, MemberRecord } from '../store/index.js';
import type { InvitationRecord } from '../store/identities.js';
import type { Repos, Storage } from '../store/storage.js';
import { hashPassword, hashSecret, newApiKey, newId } from './secrets.js';

export function toApiKeySummary(key: ApiKeyRecord): ApiKeySummary {
  const summary: ApiKeySummary = {
    id: key.id,
    organizationId: key.workspaceId,
    label: key.label,
    prefix: key.prefix,
    createdAt: key.createdAt,
  };
  if (key.lastUsedAt) summary.lastUsedAt = key.lastUsedAt;
  if (key.createdBy) summary.createdBy = key.createdBy;
  if (key.canApprove) summary.canApprove = true;
  if (key.pushOnly) summary.pushOnly = true;
  return summary;
}

export function toInvitation(invitation: InvitationRecord): Invitation {
  return {
    email: invitation.email,
    invitedAt: invitation.createdAt,
    ...(invitation.invitedBy ? { invitedBy: invitation.invitedBy } : {}),
  };
}

/**
 * Inside a write: the invitations of the account's email become memberships. An invitation
 * waits for an account with its email, whichever way it comes to be (`user create`, the
 * dashboard's new local account, a first sign-in through the identity provider).
 */
export async function acceptInvitations(
  tx: Repos,
  user: { id: string; email: string },
  at: string,
): Promise<string[]> {
  const joined: string[] = [];
  for (const invitation of await tx.invitations.forEmail(user.email)) {
    if (await tx.workspaces.addMember(invitation.workspaceId, user.id, 'member', at)) {
      joined.push(invitation.workspaceId);
    }
    await tx.invitations.delete(invitation.workspaceId, invitation.email);
  }
  return joined;
}

/** What adding an email to a workspace did: a member added, or (no account yet) an invitation. */
export type Added = { member: MemberRecord } | { invitation: Invitation };

/**
 * Users, workspaces, members and API keys: what the CLI, the admin routes and the
 * dashboard's account endpoints all do, in one place.
 */
export function createAccounts(storage: Storage, clock: Clock) {
  const { repos } = storage;
  const now = () => clock.now().toISOString();

  async function requireWorkspace(organizationId: string) {
    const workspace = await repos.workspaces.findById(organizationId);
    if (!workspace) throw notFound(`Workspace ${organizationId} not found`);
    return workspace;
  }

  async function requireUserByEmail(email: string) {
    const user = await repos.users.findByEmail(email);
    if (!user) throw notFound(`No user with email ${email}`);
    return user;
  }

  /**
   * Removes a member; the last owner stays, so a workspace is never left without one. The API
   * keys the member created in the workspace are revoked with it: whoever leaves takes no
   * access along.
   */
  async function removeMember(input: { organizationId: string; userId: string }): Promise<void> {
    await requireWorkspace(input.organizationId);
    await storage.write(async (tx) => {
      const role = await tx.workspaces.role(input.organizationId, input.userId);
      if (role === null) throw notFound('That user is not a member of this workspace');
      if (role === 'owner' && (await tx.workspaces.ownerCount(input.organizationId)) === 1) {
        throw conflict('The last owner of a workspace cannot be removed');
      }
      await tx.workspaces.removeMember(input.organizationId, input.userId);
      await tx.apiKeys.revokeCreatedBy(input.organizationId, input.userId, now());
    });
  }

  async function addMember(input: { organizationId: string; email: string }): Promise<MemberRecord> {
    await requireWorkspace(input.organizationId);
    const user = await requireUserByEmail(input.email);
    const added = await storage.write((tx) =>
      tx.workspaces.addMember(input.organizationId, user.id, 'member', now()),
    );
    if (!added) throw conflict(`${user.email} is already a member of ${input.organizationId}`);
    const members = await repos.workspaces.members(input.organizationId);
    const member = members.find((m) => m.userId === user.id);
    if (!member) throw new AppError(500, 'internal', 'The new member could not be read back');
    return member;
  }

  return {
    async createUser(input: {
      email: string;
      name: string;
      password: string;
      imageUrl?: string | undefined;
    }): Promise<User> {
      const email = input.email.toLowerCase();
      if (await repos.users.findByEmail(email)) throw conflict(`A user with email ${email} already exists`);
      const passwordHash = await hashPassword(input.password);
      const user = { id: newId('user'), email, name: input.name, passwordHash, createdAt: now() };
      const record = input.imageUrl === undefined ? user : { ...user, imageUrl: input.imageUrl };
      // Checked again inside the write: another sign-up may have finished during hashing.
      await storage.write(async (tx) => {
        if (await tx.users.findByEmail(email)) throw conflict(`A user with email ${email} already exists`);
        await tx.users.insert(record);
        await acceptInvitations(tx, record, record.createdAt);
      });
      const { passwordHash: _hidden, createdAt: _created, ...visible } = record;
      return visible;
    },

    /**
     * First run only (no account yet, or only the demo's): the owner account and a first
     * workspace, together or not at all.
     */
    async setUp(input: {
      email: string;
      name: string;
      password: string;
      workspaceName: string;
      /** The first workspace's agent, when setup asked (with `acp`, which ACP agent). */
      agent?: AgentSettings['agent'] | undefined;
      acpAgent?: string | undefined;
    }) {
      const closed = () => conflict('Session Desk is already set up; sign in instead');
      if ((await ownAccountCount(repos)) > 0) throw closed();
      const passwordHash = await hashPassword(input.password);
      const user = {
        id: newId('user'),
        email: input.email.toLowerCase(),
        name: input.name,
        passwordHash,
        createdAt: now(),
      };
      const workspace: Workspace = {
        organizationId: newId('workspace'),
        name: input.workspaceName,
        role: 'owner',
      };
      await storage.write(async (tx) => {
        if ((await ownAccountCount(tx)) > 0) throw closed();
        await tx.users.insert(user);
        await tx.workspaces.insert({
          id: workspace.organizationId,
          name: workspace.name,
          createdAt: user.createdAt,
        });
        await tx.workspaces.addMember(workspace.organizationId, user.id, 'owner', user.createdAt);
        if (input.agent !== undefined)
          await tx.workspaces.putSettings(workspace.organizationId, {
            agent: input.agent,
            ...(input.agent === 'acp' && input.acpAgent !== undefined ? { acpAgent: input.acpAgent } : {}),
          });
      });
      return { user: { id: user.id, email: user.email, name: user.name }, workspace };
    },

    /** A workspace and its owner, with the agent it runs when one is given (checked by the caller). */
    async createWorkspace(input: {
      name: string;
      ownerEmail: string;
      agent?: AgentSettings['agent'] | undefined;
      acpAgent?: string | undefined;
    }): Promise<Workspace> {
      const owner = await requireUserByEmail(input.ownerEmail);
      const id = newId('workspace');
      const at = now();
      const { agent, acpAgent } = input;
      await storage.write(async (tx) => {
        await tx.workspaces.insert({ id, name: input.name, createdAt: at });
        await tx.workspaces.addMember(id, owner.id, 'owner', at);
        if (agent !== undefined) {
          await tx.workspaces.putSettings(id, { agent, ...(acpAgent === undefined ? {} : { acpAgent }) });
        }
      });
      return { organizationId: id, name: input.name, role: 'owner' };
    },

    addMember,

    /**
     * `member add` and the dashboard's Members page: the account with that email joins the
     * workspace; an email without an account is invited instead, and joins when it first signs in.
     */
    async addMemberOrInvite(input: {
      organizationId: string;
      email: string;
      invitedBy?: string | undefined;
    }): Promise<Added> {
      await requireWorkspace(input.organizationId);
      const email = input.email.toLowerCase();
      const invited = await storage.write(async (tx) => {
        // Looked up inside the write: an account made meanwhile is added, not invited.
        if (await tx.users.findByEmail(email)) return null;
        const at = now();
        if (
          !(await tx.invitations.insert({
            workspaceId: input.organizationId,
            email,
            invitedBy: input.invitedBy ?? null,
            createdAt: at,
          }))
        ) {
          throw conflict(`${email} is already invited to ${input.organizationId}`);
        }
        return (await tx.invitations.list(input.organizationId)).find((i) => i.email === email) ?? null;
      });
      if (invited) return { invitation: toInvitation(invited) };
      return { member: await addMember({ organizationId: input.organizationId, email }) };
    },

    removeMember,

    /**
     * `sessiondesk member remove`: by email, with the same last-owner rule; an email that is
     * only invited has its invitation withdrawn. Says which of the two it did.
     */
    async removeMemberByEmail(input: {
      organizationId: string;
      email: string;
    }): Promise<'member' | 'invitation'> {
      await requireWorkspace(input.organizationId);
      if (await storage.write((tx) => tx.invitations.delete(input.organizationId, input.email))) {
        return 'invitation';
      }
      const user = await requireUserByEmail(input.email);
      await removeMember({ organizationId: input.organizationId, userId: user.id });
      return 'member';
    },

    async withdrawInvitation(input: { organizationId: string; email: string }): Promise<void> {
      await requireWorkspace(input.organizationId);
      if (!(await storage.write((tx) => tx.invitations.delete(input.organizationId, input.email)))) {
        throw notFound(`${input.email.toLowerCase()} is not invited to ${input.organizationId}`);
      }
    },

    async listMembers(organizationId: string): Promise<MemberRecord[]> {
      await requireWorkspace(organizationId);
      return repos.workspaces.members(organizationId);
    },

    async listInvitations(organizationId: string): Promise<Invitation[]> {
      await requireWorkspace(organizationId);
      return (await repos.invitations.list(organizationId)).map(toInvitation);
    },

    /**
     * `sessiondesk user set-password`: a password for an account (one made by a sign-in through
     * the identity provider has none). Its sign-ins end: whoever knew the account before does
     * not stay signed in through a password change.
     */
    async setPassword(input: { email: string; password: string }): Promise<void> {
      const user = await requireUserByEmail(input.email.toLowerCase());
      const passwordHash = await hashPassword(input.password);
      await storage.write(async (tx) => {
        await tx.users.setPasswordHash(user.id, passwordHash);
        await tx.authSessions.deleteForUser(user.id);
      });
    },

    async createKey(input: {
      organizationId: string;
      label?: string | undefined;
      createdBy?: string | undefined;
      /** Decided by an owner: the key may decide agents' requests. */
      canApprove?: boolean | undefined;
      /** The key may only push sessions (`sessiondesk push`). */
      pushOnly?: boolean | undefined;
    }): Promise<CreatedApiKey> {
      await requireWorkspace(input.organizationId);
      const { key, prefix } = newApiKey();
      const record = {
        id: newId('apiKey'),
        workspaceId: input.organizationId,
        prefix,
        label: input.label ?? '',
        createdAt: now(),
        ...(input.canApprove === true ? { canApprove: true as const } : {}),
        ...(input.pushOnly === true ? { pushOnly: true as const } : {}),
      };
      const createdBy = input.createdBy ?? null;
      await storage.write((tx) => tx.apiKeys.insert({ ...record, keyHash: hashSecret(key), createdBy }));
      const creator = createdBy === null ? null : await repos.users.findById(createdBy);
      return {
        ...toApiKeySummary(
          creator ? { ...record, createdBy: { userId: creator.id, name: creator.name } } : record,
        ),
        key,
      };
    },

    async listKeys(organizationId: string): Promise<ApiKeySummary[]> {
      await requireWorkspace(organizationId);
      return (await repos.apiKeys.list(organizationId)).map(toApiKeySummary);
    },

    /** `onlyMadeBy`: a member, who may revoke only the keys they made themselves. */
    async revokeKey(input: { organizationId: string; keyId: string; onlyMadeBy?: string }): Promise<void> {
      await requireWorkspace(input.organizationId);
      if (input.onlyMadeBy !== undefined) {
        const key = await storage.repos.apiKeys.findById(input.keyId);
        if (key && key.workspaceId === input.organizationId && key.createdBy?.userId !== input.onlyMadeBy) {
          throw forbidden(
            'A member can revoke only the keys they made; ask an owner of this workspace to revoke this one.',
          );
        }
      }
      const revoked = await storage.write((tx) =>
        tx.apiKeys.revoke(input.organizationId, input.keyId, now()),
      );
      if (!revoked) throw notFound(`No active key ${input.keyId} in ${input.organizationId}`);
    },
  };
}
export type Accounts = ReturnType<typeof createAccounts>;
