import type { Db } from './sqljs.js';
import { optStr, str } from './row.js';

export interface AuthSessionRecord {
  userId: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  prefix: string;
  label: string;
  createdAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
  /** The user who created it (in the dashboard), when there was one. */
  createdBy?: { userId: string; name: string };
  /** An owner let it decide agents' requests. */
  canApprove?: true;
  /** Made for a desktop's `sessiondesk push`: it may push sessions and do nothing else. */
  pushOnly?: true;
}

/** Sign-in sessions: only a hash of each token is stored. */
export function createAuthSessionsRepository(db: Db) {
  return {
    insert(tokenHash: string, session: AuthSessionRecord): void {
      db.run(
        `INSERT INTO auth_sessions (token_hash, user_id, created_at, last_seen_at, expires_at)
         VALUES (?, ?, ?, ?, ?)`,
        [tokenHash, session.userId, session.createdAt, session.lastSeenAt, session.expiresAt],
      );
    },
    find(tokenHash: string): AuthSessionRecord | null {
      const row = db.first(
        'SELECT user_id, created_at, last_seen_at, expires_at FROM auth_sessions WHERE token_hash = ?',
        [tokenHash],
      );
      return row
        ? {
            userId: str(row[0]),
            createdAt: str(row[1]),
            lastSeenAt: str(row[2]),
            expiresAt: str(row[3]),
          }
        : null;
    },
    touch(tokenHash: string, at: string): void {
      db.run('UPDATE auth_sessions SET last_seen_at = ? WHERE token_hash = ?', [at, tokenHash]);
    },
    delete(tokenHash: string): void {
      db.run('DELETE FROM auth_sessions WHERE token_hash = ?', [tokenHash]);
    },
    /** Ends every sign-in of a user (a password they signed in with is no longer theirs). */
    deleteForUser(userId: string): void {
      db.run('DELETE FROM auth_sessions WHERE user_id = ?', [userId]);
    },
    deleteExpired(now: string): void {
      db.run('DELETE FROM auth_sessions WHERE expires_at <= ?', [now]);
    },
  };
}
export type AuthSessionsRepository = ReturnType<typeof createAuthSessionsRepository>;

const KEY_COLUMNS =
  'k.id, k.workspace_id, k.prefix, k.label, k.created_at, k.last_used_at, k.revoked_at, k.created_by, u.name, k.can_approve, k.push_only';
const KEYS = 'api_keys k LEFT JOIN users u ON u.id = k.created_by';

function toKey(row: unknown[]): ApiKeyRecord {
  const r = row as Parameters<typeof str>[0][];
  const key: ApiKeyRecord = {
    id: str(r[0]),
    workspaceId: str(r[1]),
    prefix: str(r[2]),
    label: str(r[3]),
    createdAt: str(r[4]),
  };
  const lastUsedAt = optStr(r[5]);
  const revokedAt = optStr(r[6]);
  if (lastUsedAt !== undefined) key.lastUsedAt = lastUsedAt;
  if (revokedAt !== undefined) key.revokedAt = revokedAt;
  const createdBy = optStr(r[7]);
  if (createdBy !== undefined) key.createdBy = { userId: createdBy, name: optStr(r[8]) ?? '' };
  if (r[9] === 1) key.canApprove = true;
  if (r[10] === 1) key.pushOnly = true;
  return key;
}

/** API keys: only a hash of each key is stored, with a short prefix for display. */
export function createApiKeysRepository(db: Db) {
  return {
    insert(key: Omit<ApiKeyRecord, 'createdBy'> & { keyHash: string; createdBy: string | null }): void {
      db.run(
        `INSERT INTO api_keys (id, workspace_id, key_hash, prefix, label, created_by, created_at, can_approve, push_only)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          key.id,
          key.workspaceId,
          key.keyHash,
          key.prefix,
          key.label,
          key.createdBy,
          key.createdAt,
          key.canApprove ? 1 : 0,
          key.pushOnly ? 1 : 0,
        ],
      );
    },
    findById(id: string): ApiKeyRecord | null {
      const row = db.first(`SELECT ${KEY_COLUMNS} FROM ${KEYS} WHERE k.id = ?`, [id]);
      return row ? toKey(row) : null;
    },
    findByHash(keyHash: string): ApiKeyRecord | null {
      const row = db.first(`SELECT ${KEY_COLUMNS} FROM ${KEYS} WHERE k.key_hash = ?`, [keyHash]);
      return row ? toKey(row) : null;
    },
    isActive(id: string): boolean {
      return db.first('SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL', [id]) !== null;
    },
    /** Keys that are not revoked, newest first. */
    list(workspaceId: string): ApiKeyRecord[] {
      return db
        .all(
          `SELECT ${KEY_COLUMNS} FROM ${KEYS} WHERE k.workspace_id = ? AND k.revoked_at IS NULL
           ORDER BY k.created_at DESC, k.rowid DESC`,
          [workspaceId],
        )
        .map(toKey);
    },
    touch(id: string, at: string): void {
      db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [at, id]);
    },
    /** Revokes the active keys a user created in a workspace; returns how many. */
    revokeCreatedBy(workspaceId: string, userId: string, at: string): number {
      return db.run(
        'UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ? AND created_by = ? AND revoked_at IS NULL',
        [at, workspaceId, userId],
      );
    },
    revoke(workspaceId: string, id: string, at: string): boolean {
      return (
        db.run(
          'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL',
          [at, id, workspaceId],
        ) > 0
      );
    },
  };
}
export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>;
