import type { ApprovalRule } from '../../src-shared/approval-rules.js';
import type { ApiKeyRecord, AuthSessionRecord } from '../store/credentials.js';
import type { Repos } from '../store/storage.js';
import type { UserRecord } from '../store/users.js';
import type {
  MemberRecord,
  MembershipRecord,
  Role,
  WorkspaceRecord,
  WorkspaceSettingsRecord,
} from '../store/workspaces.js';
import { jsonArrayColumn } from '../store/row.js';
import { optText, text, type Queryable, type Row } from './rows.js';

function toUser(row: Row): UserRecord {
  const user: UserRecord = {
    id: text(row.id),
    email: text(row.email),
    name: text(row.name),
    passwordHash: text(row.password_hash),
    createdAt: text(row.created_at),
  };
  const image = optText(row.image_url);
  if (image !== undefined) user.imageUrl = image;
  return user;
}

/**
 * The users' repository on PostgreSQL: the same methods, answers and rules as the sql.js one
 * (`store/users.ts`). Where sql.js breaks a tie of `created_at` by insertion order (`rowid`),
 * PostgreSQL has none: ties go by id until the schema keeps an insertion sequence.
 */
export function postgresUsers(sql: Queryable): Repos['users'] {
  return {
    async insert(user) {
      await sql`INSERT INTO users (id, email, name, image_url, password_hash, created_at)
        VALUES (${user.id}, ${user.email}, ${user.name}, ${user.imageUrl ?? null}, ${user.passwordHash}, ${user.createdAt})`;
    },
    async findById(id) {
      const [row] = await sql<Row[]>`SELECT * FROM users WHERE id = ${id}`;
      return row ? toUser(row) : null;
    },
    async findByEmail(email) {
      const [row] = await sql<Row[]>`SELECT * FROM users WHERE email = ${email.toLowerCase()}`;
      return row ? toUser(row) : null;
    },
    async setPasswordHash(id, passwordHash) {
      await sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${id}`;
    },
    async firstCreated(except) {
      const [row] = await sql<Row[]>`SELECT * FROM users WHERE NOT (email = ANY(${[...except]}::text[]))
        ORDER BY created_at, made_order LIMIT 1`;
      return row ? toUser(row) : null;
    },
    async count() {
      const [row] = await sql<{ count: string }[]>`SELECT count(*) AS count FROM users`;
      return Number(row?.count ?? 0);
    },
  };
}

export function postgresAuthSessions(sql: Queryable): Repos['authSessions'] {
  return {
    async insert(tokenHash, session) {
      await sql`INSERT INTO auth_sessions (token_hash, user_id, created_at, last_seen_at, expires_at)
        VALUES (${tokenHash}, ${session.userId}, ${session.createdAt}, ${session.lastSeenAt}, ${session.expiresAt})`;
    },
    async find(tokenHash) {
      const [row] = await sql<Row[]>`SELECT * FROM auth_sessions WHERE token_hash = ${tokenHash}`;
      if (!row) return null;
      const found: AuthSessionRecord = {
        userId: text(row.user_id),
        createdAt: text(row.created_at),
        lastSeenAt: text(row.last_seen_at),
        expiresAt: text(row.expires_at),
      };
      return found;
    },
    async touch(tokenHash, at) {
      await sql`UPDATE auth_sessions SET last_seen_at = ${at} WHERE token_hash = ${tokenHash}`;
    },
    async delete(tokenHash) {
      await sql`DELETE FROM auth_sessions WHERE token_hash = ${tokenHash}`;
    },
    async deleteForUser(userId) {
      await sql`DELETE FROM auth_sessions WHERE user_id = ${userId}`;
    },
    async deleteExpired(now) {
      await sql`DELETE FROM auth_sessions WHERE expires_at <= ${now}`;
    },
  };
}

function toKey(row: Row): ApiKeyRecord {
  const key: ApiKeyRecord = {
    id: text(row.id),
    workspaceId: text(row.workspace_id),
    prefix: text(row.prefix),
    label: text(row.label),
    createdAt: text(row.created_at),
  };
  const lastUsedAt = optText(row.last_used_at);
  const revokedAt = optText(row.revoked_at);
  if (lastUsedAt !== undefined) key.lastUsedAt = lastUsedAt;
  if (revokedAt !== undefined) key.revokedAt = revokedAt;
  const createdBy = optText(row.created_by);
  if (createdBy !== undefined) key.createdBy = { userId: createdBy, name: optText(row.creator_name) ?? '' };
  if (row.can_approve === true) key.canApprove = true;
  if (row.push_only === true) key.pushOnly = true;
  return key;
}

export function postgresApiKeys(sql: Queryable): Repos['apiKeys'] {
  const keys = (where: ReturnType<Queryable>) =>
    sql<
      Row[]
    >`SELECT k.*, u.name AS creator_name FROM api_keys k LEFT JOIN users u ON u.id = k.created_by ${where}`;
  return {
    async insert(key) {
      await sql`INSERT INTO api_keys (id, workspace_id, key_hash, prefix, label, created_by, created_at, can_approve, push_only)
        VALUES (${key.id}, ${key.workspaceId}, ${key.keyHash}, ${key.prefix}, ${key.label}, ${key.createdBy},
          ${key.createdAt}, ${key.canApprove === true}, ${key.pushOnly === true})`;
    },
    async findById(id) {
      const [row] = await keys(sql`WHERE k.id = ${id}`);
      return row ? toKey(row) : null;
    },
    async findByHash(keyHash) {
      const [row] = await keys(sql`WHERE k.key_hash = ${keyHash}`);
      return row ? toKey(row) : null;
    },
    async isActive(id) {
      const rows = await sql`SELECT 1 FROM api_keys WHERE id = ${id} AND revoked_at IS NULL`;
      return rows.length > 0;
    },
    async list(workspaceId) {
      const rows = await keys(
        sql`WHERE k.workspace_id = ${workspaceId} AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.made_order DESC`,
      );
      return rows.map(toKey);
    },
    async touch(id, at) {
      await sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`;
    },
    async revokeCreatedBy(workspaceId, userId, at) {
      const done = await sql`UPDATE api_keys SET revoked_at = ${at}
        WHERE workspace_id = ${workspaceId} AND created_by = ${userId} AND revoked_at IS NULL`;
      return done.count;
    },
    async revoke(workspaceId, id, at) {
      const done = await sql`UPDATE api_keys SET revoked_at = ${at}
        WHERE id = ${id} AND workspace_id = ${workspaceId} AND revoked_at IS NULL`;
      return done.count > 0;
    },
  };
}

export function postgresWorkspaces(sql: Queryable): Repos['workspaces'] {
  return {
    async settings(workspaceId) {
      const [row] = await sql<Row[]>`SELECT * FROM workspace_settings WHERE workspace_id = ${workspaceId}`;
      if (!row) return null;
      const settings: WorkspaceSettingsRecord = {
        agent: text(row.agent) as WorkspaceSettingsRecord['agent'],
      };
      const command = optText(row.command);
      if (command !== undefined) {
        // A program (an array) or, since commands are named, {"name": …}: as sql.js keeps it.
        const parsed = JSON.parse(command) as string[] | { name: string };
        if (Array.isArray(parsed)) settings.command = parsed;
        else settings.commandName = parsed.name;
      }
      if (typeof row.timeout_ms === 'number') settings.timeoutMs = row.timeout_ms;
      const allowedHosts = optText(row.allowed_hosts);
      if (allowedHosts !== undefined) settings.allowedHosts = JSON.parse(allowedHosts) as string[];
      const acpAgent = optText(row.acp_agent);
      if (acpAgent !== undefined) settings.acpAgent = acpAgent;
      const approvals = optText(row.approvals);
      if (approvals !== undefined)
        settings.approvals = approvals as WorkspaceSettingsRecord['approvals'] & string;
      if (typeof row.approval_timeout_s === 'number')
        settings.approvalTimeoutSeconds = row.approval_timeout_s;
      const rules = optText(row.approval_rules);
      if (rules !== undefined) settings.approvalRules = JSON.parse(rules) as ApprovalRule[];
      return settings;
    },
    async putSettings(workspaceId, settings) {
      const command =
        settings.commandName !== undefined
          ? JSON.stringify({ name: settings.commandName })
          : settings.command
            ? JSON.stringify(settings.command)
            : null;
      await sql`INSERT INTO workspace_settings (workspace_id, agent, command, timeout_ms, allowed_hosts, acp_agent,
          approvals, approval_timeout_s, approval_rules)
        VALUES (${workspaceId}, ${settings.agent}, ${command}, ${settings.timeoutMs ?? null},
          ${settings.allowedHosts ? JSON.stringify(settings.allowedHosts) : null}, ${settings.acpAgent ?? null},
          ${settings.approvals ?? null}, ${settings.approvalTimeoutSeconds ?? null},
          ${jsonArrayColumn(settings.approvalRules)})
        ON CONFLICT (workspace_id) DO UPDATE SET agent = excluded.agent, command = excluded.command,
          timeout_ms = excluded.timeout_ms, allowed_hosts = excluded.allowed_hosts,
          acp_agent = excluded.acp_agent, approvals = excluded.approvals,
          approval_timeout_s = excluded.approval_timeout_s, approval_rules = excluded.approval_rules`;
    },
    async insert(workspace: WorkspaceRecord) {
      await sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace.id}, ${workspace.name}, ${workspace.createdAt})`;
    },
    async findById(id) {
      const [row] = await sql<Row[]>`SELECT id, name, created_at FROM workspaces WHERE id = ${id}`;
      return row ? { id: text(row.id), name: text(row.name), createdAt: text(row.created_at) } : null;
    },
    async addMember(workspaceId, userId, role, at) {
      const done = await sql`INSERT INTO memberships (workspace_id, user_id, role, created_at)
        VALUES (${workspaceId}, ${userId}, ${role}, ${at}) ON CONFLICT (workspace_id, user_id) DO NOTHING`;
      return done.count > 0;
    },
    async removeMember(workspaceId, userId) {
      const done =
        await sql`DELETE FROM memberships WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`;
      return done.count > 0;
    },
    async ownerCount(workspaceId) {
      const [row] = await sql<{ count: string }[]>`SELECT count(*) AS count FROM memberships
        WHERE workspace_id = ${workspaceId} AND role = 'owner'`;
      return Number(row?.count ?? 0);
    },
    async role(workspaceId, userId) {
      const [row] = await sql<
        Row[]
      >`SELECT role FROM memberships WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`;
      return row ? (text(row.role) as Role) : null;
    },
    async listForUser(userId) {
      const rows = await sql<
        Row[]
      >`SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
        WHERE m.user_id = ${userId} ORDER BY w.created_at, w.made_order`;
      return rows.map((r): MembershipRecord => ({
        organizationId: text(r.id),
        name: text(r.name),
        role: text(r.role) as Role,
      }));
    },
    async members(workspaceId) {
      const rows = await sql<Row[]>`SELECT u.id, u.email, u.name, u.image_url, m.role, m.created_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.workspace_id = ${workspaceId} ORDER BY m.created_at, m.made_order`;
      return rows.map((r) => {
        const member: MemberRecord = {
          userId: text(r.id),
          email: text(r.email),
          name: text(r.name),
          role: text(r.role) as Role,
          joinedAt: text(r.created_at),
        };
        const imageUrl = optText(r.image_url);
        if (imageUrl !== undefined) member.imageUrl = imageUrl;
        return member;
      });
    },
  };
}
