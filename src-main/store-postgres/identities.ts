import type { IdentityRecord, InvitationRecord, SignInFlowRecord } from '../store/identities.js';
import type { Repos } from '../store/storage.js';
import { optText, text, type Queryable, type Row } from './rows.js';

/**
 * Sign-ins through an identity provider, the identities linked to accounts, and invitations, on
 * PostgreSQL: the same methods, answers and rules as the sql.js ones (`store/identities.ts`).
 */

function toFlow(row: Row): SignInFlowRecord {
  return {
    handleHash: text(row.handle_hash),
    stateHash: text(row.state_hash),
    nonce: text(row.nonce),
    codeVerifier: text(row.code_verifier),
    redirectUri: text(row.redirect_uri),
    returnTo: text(row.return_to),
    createdAt: text(row.created_at),
    expiresAt: text(row.expires_at),
  };
}

export function postgresSignInFlows(sql: Queryable): Repos['signInFlows'] {
  return {
    async insert(flow) {
      await sql`INSERT INTO sign_in_flows (handle_hash, state_hash, nonce, code_verifier, redirect_uri, return_to,
          created_at, expires_at)
        VALUES (${flow.handleHash}, ${flow.stateHash}, ${flow.nonce}, ${flow.codeVerifier}, ${flow.redirectUri},
          ${flow.returnTo}, ${flow.createdAt}, ${flow.expiresAt})`;
    },
    async take(handleHash, now) {
      // One statement: of two processes given the same answer at once, one gets the row.
      const [row] = await sql<Row[]>`DELETE FROM sign_in_flows WHERE handle_hash = ${handleHash} RETURNING *`;
      if (!row) return null;
      const flow = toFlow(row);
      return flow.expiresAt > now ? flow : null;
    },
    async deleteExpired(now) {
      const done = await sql`DELETE FROM sign_in_flows WHERE expires_at <= ${now}`;
      return done.count;
    },
    async countActive(now) {
      const [row] = await sql<{ count: string }[]>`SELECT count(*) AS count FROM sign_in_flows
        WHERE expires_at > ${now}`;
      return Number(row?.count ?? 0);
    },
  };
}

function toIdentity(row: Row): IdentityRecord {
  return {
    issuer: text(row.issuer),
    subject: text(row.subject),
    userId: text(row.user_id),
    createdAt: text(row.created_at),
  };
}

export function postgresIdentities(sql: Queryable): Repos['identities'] {
  return {
    async insert(identity) {
      await sql`INSERT INTO user_identities (issuer, subject, user_id, created_at)
        VALUES (${identity.issuer}, ${identity.subject}, ${identity.userId}, ${identity.createdAt})`;
    },
    async find(issuer, subject) {
      const [row] = await sql<Row[]>`SELECT * FROM user_identities
        WHERE issuer = ${issuer} AND subject = ${subject}`;
      return row ? toIdentity(row) : null;
    },
    async forUser(userId, issuer) {
      const [row] = await sql<Row[]>`SELECT * FROM user_identities
        WHERE user_id = ${userId} AND issuer = ${issuer}`;
      return row ? toIdentity(row) : null;
    },
  };
}

function toInvitation(row: Row): InvitationRecord {
  const invitation: InvitationRecord = {
    workspaceId: text(row.workspace_id),
    email: text(row.email),
    createdAt: text(row.created_at),
  };
  const inviter = optText(row.invited_by);
  if (inviter !== undefined)
    invitation.invitedBy = { userId: inviter, name: optText(row.inviter_name) ?? '' };
  return invitation;
}

export function postgresInvitations(sql: Queryable): Repos['invitations'] {
  const invitations = (where: ReturnType<Queryable>) =>
    sql<Row[]>`SELECT i.*, u.name AS inviter_name FROM invitations i
      LEFT JOIN users u ON u.id = i.invited_by ${where}`;
  return {
    async insert(invitation) {
      const done = await sql`INSERT INTO invitations (workspace_id, email, invited_by, created_at)
        VALUES (${invitation.workspaceId}, ${invitation.email}, ${invitation.invitedBy}, ${invitation.createdAt})
        ON CONFLICT (workspace_id, email) DO NOTHING`;
      return done.count > 0;
    },
    async list(workspaceId) {
      const rows = await invitations(
        sql`WHERE i.workspace_id = ${workspaceId} ORDER BY i.created_at, i.email COLLATE "C"`,
      );
      return rows.map(toInvitation);
    },
    async forEmail(email) {
      const rows = await invitations(
        sql`WHERE i.email = ${email.toLowerCase()} ORDER BY i.created_at, i.workspace_id COLLATE "C"`,
      );
      return rows.map(toInvitation);
    },
    async delete(workspaceId, email) {
      const done = await sql`DELETE FROM invitations
        WHERE workspace_id = ${workspaceId} AND email = ${email.toLowerCase()}`;
      return done.count > 0;
    },
  };
}
