import type { Db } from './sqljs.js';
import { optStr, str } from './row.js';

/** A sign-in on its way through the identity provider: what its answer is checked against. */
export interface SignInFlowRecord {
  /** The hash of the handle the browser holds in its cookie. */
  handleHash: string;
  stateHash: string;
  nonce: string;
  codeVerifier: string;
  /** Where the provider was told to send its answer: its code is exchanged with the same. */
  redirectUri: string;
  /** The dashboard's path to land on once signed in. */
  returnTo: string;
  createdAt: string;
  expiresAt: string;
}

const FLOW_COLUMNS =
  'handle_hash, state_hash, nonce, code_verifier, redirect_uri, return_to, created_at, expires_at';

function toFlow(row: unknown[]): SignInFlowRecord {
  const [handleHash, stateHash, nonce, codeVerifier, redirectUri, returnTo, createdAt, expiresAt] =
    row as Parameters<typeof str>[0][];
  return {
    handleHash: str(handleHash),
    stateHash: str(stateHash),
    nonce: str(nonce),
    codeVerifier: str(codeVerifier),
    redirectUri: str(redirectUri),
    returnTo: str(returnTo),
    createdAt: str(createdAt),
    expiresAt: str(expiresAt),
  };
}

export function createSignInFlowsRepository(db: Db) {
  return {
    insert(flow: SignInFlowRecord): void {
      db.run(`INSERT INTO sign_in_flows (${FLOW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
        flow.handleHash,
        flow.stateHash,
        flow.nonce,
        flow.codeVerifier,
        flow.redirectUri,
        flow.returnTo,
        flow.createdAt,
        flow.expiresAt,
      ]);
    },
    /**
     * Takes the flow out: it is deleted whatever comes next, so its answer is used once. An
     * expired one is deleted too, and answered null.
     */
    take(handleHash: string, now: string): SignInFlowRecord | null {
      const row = db.first(`SELECT ${FLOW_COLUMNS} FROM sign_in_flows WHERE handle_hash = ?`, [handleHash]);
      if (!row) return null;
      db.run('DELETE FROM sign_in_flows WHERE handle_hash = ?', [handleHash]);
      const flow = toFlow(row);
      return flow.expiresAt > now ? flow : null;
    },
    deleteExpired(now: string): number {
      return db.run('DELETE FROM sign_in_flows WHERE expires_at <= ?', [now]);
    },
    /** How many have not expired: sign-ins under way. */
    countActive(now: string): number {
      return Number(db.first('SELECT count(*) FROM sign_in_flows WHERE expires_at > ?', [now])?.[0] ?? 0);
    },
  };
}
export type SignInFlowsRepository = ReturnType<typeof createSignInFlowsRepository>;

/** A person at an identity provider (its issuer, their subject there) linked to an account. */
export interface IdentityRecord {
  issuer: string;
  subject: string;
  userId: string;
  createdAt: string;
}

export function createIdentitiesRepository(db: Db) {
  const toIdentity = (row: unknown[]): IdentityRecord => {
    const [issuer, subject, userId, createdAt] = row as Parameters<typeof str>[0][];
    return { issuer: str(issuer), subject: str(subject), userId: str(userId), createdAt: str(createdAt) };
  };
  return {
    insert(identity: IdentityRecord): void {
      db.run('INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)', [
        identity.issuer,
        identity.subject,
        identity.userId,
        identity.createdAt,
      ]);
    },
    find(issuer: string, subject: string): IdentityRecord | null {
      const row = db.first(
        'SELECT issuer, subject, user_id, created_at FROM user_identities WHERE issuer = ? AND subject = ?',
        [issuer, subject],
      );
      return row ? toIdentity(row) : null;
    },
    /** The account's identity at that provider, if it has one. */
    forUser(userId: string, issuer: string): IdentityRecord | null {
      const row = db.first(
        'SELECT issuer, subject, user_id, created_at FROM user_identities WHERE user_id = ? AND issuer = ?',
        [userId, issuer],
      );
      return row ? toIdentity(row) : null;
    },
  };
}
export type IdentitiesRepository = ReturnType<typeof createIdentitiesRepository>;

export interface InvitationRecord {
  workspaceId: string;
  /** Lower-cased, as accounts' emails are. */
  email: string;
  /** The owner who invited, with their name; absent when the command line did. */
  invitedBy?: { userId: string; name: string };
  createdAt: string;
}

export function createInvitationsRepository(db: Db) {
  const SELECT = `SELECT i.workspace_id, i.email, i.invited_by, u.name, i.created_at
    FROM invitations i LEFT JOIN users u ON u.id = i.invited_by`;
  const toInvitation = (row: unknown[]): InvitationRecord => {
    const [workspaceId, email, invitedBy, inviterName, createdAt] = row as Parameters<typeof str>[0][];
    const invitation: InvitationRecord = {
      workspaceId: str(workspaceId),
      email: str(email),
      createdAt: str(createdAt),
    };
    const inviter = optStr(invitedBy);
    if (inviter !== undefined) invitation.invitedBy = { userId: inviter, name: optStr(inviterName) ?? '' };
    return invitation;
  };
  return {
    /** False when the email is already invited to the workspace. */
    insert(invitation: { workspaceId: string; email: string; invitedBy: string | null; createdAt: string }) {
      return (
        db.run(
          `INSERT INTO invitations (workspace_id, email, invited_by, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (workspace_id, email) DO NOTHING`,
          [invitation.workspaceId, invitation.email, invitation.invitedBy, invitation.createdAt],
        ) > 0
      );
    },
    /** A workspace's invitations, oldest first (ties by email: the same order on either database). */
    list(workspaceId: string): InvitationRecord[] {
      return db
        .all(`${SELECT} WHERE i.workspace_id = ? ORDER BY i.created_at, i.email`, [workspaceId])
        .map(toInvitation);
    },
    /** Every workspace's invitation of this email, oldest first. */
    forEmail(email: string): InvitationRecord[] {
      return db
        .all(`${SELECT} WHERE i.email = ? ORDER BY i.created_at, i.workspace_id`, [email.toLowerCase()])
        .map(toInvitation);
    },
    delete(workspaceId: string, email: string): boolean {
      return (
        db.run('DELETE FROM invitations WHERE workspace_id = ? AND email = ?', [
          workspaceId,
          email.toLowerCase(),
        ]) > 0
      );
    },
  };
}
export type InvitationsRepository = ReturnType<typeof createInvitationsRepository>;
