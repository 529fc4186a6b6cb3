import type { ApprovalRule } from '../../src-shared/approval-rules.js';
import type { ApprovalMode } from '../../src-shared/approvals.js';
import type { AgentKind } from '../../src-shared/constants.js';
import type { Db } from './sqljs.js';
import { jsonArrayColumn, optStr, str } from './row.js';

export type Role = 'owner' | 'member';

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface MembershipRecord {
  organizationId: string;
  name: string;
  role: Role;
}

export interface MemberRecord {
  userId: string;
  email: string;
  name: string;
  imageUrl?: string;
  role: Role;
  joinedAt: string;
}

export interface WorkspaceSettingsRecord {
  agent: AgentKind;
  /** A command the administrator defined, by name. */
  commandName?: string;
  /** A program a workspace chose itself (stored before that became the administrator's choice). */
  command?: string[];
  timeoutMs?: number;
  /** The hosts its agents may reach; absent when the network is open. */
  allowedHosts?: string[];
  /** With `agent: 'acp'`: the ACP agent's id. */
  acpAgent?: string;
  /** `ask`: agents' requests wait for a decision; absent means `auto`. */
  approvals?: ApprovalMode;
  approvalTimeoutSeconds?: number;
  /** Checked in order before anyone is asked; absent when there are none. */
  approvalRules?: ApprovalRule[];
}

export function createWorkspacesRepository(db: Db) {
  return {
    settings(workspaceId: string): WorkspaceSettingsRecord | null {
      const row = db.first(
        `SELECT agent, command, timeout_ms, allowed_hosts, acp_agent, approvals, approval_timeout_s,
           approval_rules
         FROM workspace_settings WHERE workspace_id = ?`,
        [workspaceId],
      );
      if (!row) return null;
      const settings: WorkspaceSettingsRecord = { agent: str(row[0]) as WorkspaceSettingsRecord['agent'] };
      const command = optStr(row[1]);
      if (command !== undefined) {
        // The column holds a program (an array) or, since commands are named, {"name": …}.
        const parsed = JSON.parse(command) as string[] | { name: string };
        if (Array.isArray(parsed)) settings.command = parsed;
        else settings.commandName = parsed.name;
      }
      if (typeof row[2] === 'number') settings.timeoutMs = row[2];
      const allowedHosts = optStr(row[3]);
      if (allowedHosts !== undefined) settings.allowedHosts = JSON.parse(allowedHosts) as string[];
      const acpAgent = optStr(row[4]);
      if (acpAgent !== undefined) settings.acpAgent = acpAgent;
      const approvals = optStr(row[5]);
      if (approvals !== undefined) settings.approvals = approvals as ApprovalMode;
      if (typeof row[6] === 'number') settings.approvalTimeoutSeconds = row[6];
      const rules = optStr(row[7]);
      if (rules !== undefined) settings.approvalRules = JSON.parse(rules) as ApprovalRule[];
      return settings;
    },
    putSettings(workspaceId: string, settings: WorkspaceSettingsRecord): void {
      db.run(
        `INSERT INTO workspace_settings (workspace_id, agent, command, timeout_ms, allowed_hosts, acp_agent,
           approvals, approval_timeout_s, approval_rules)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (workspace_id) DO UPDATE SET agent = excluded.agent, command = excluded.command,
           timeout_ms = excluded.timeout_ms, allowed_hosts = excluded.allowed_hosts,
           acp_agent = excluded.acp_agent, approvals = excluded.approvals,
           approval_timeout_s = excluded.approval_timeout_s, approval_rules = excluded.approval_rules`,
        [
          workspaceId,
          settings.agent,
          settings.commandName !== undefined
            ? JSON.stringify({ name: settings.commandName })
            : settings.command
              ? JSON.stringify(settings.command)
              : null,
          settings.timeoutMs ?? null,
          settings.allowedHosts ? JSON.stringify(settings.allowedHosts) : null,
          settings.acpAgent ?? null,
          settings.approvals ?? null,
          settings.approvalTimeoutSeconds ?? null,
          jsonArrayColumn(settings.approvalRules),
        ],
      );
    },
    insert(workspace: WorkspaceRecord): void {
      db.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', [
        workspace.id,
        workspace.name,
        workspace.createdAt,
      ]);
    },
    findById(id: string): WorkspaceRecord | null {
      const row = db.first('SELECT id, name, created_at FROM workspaces WHERE id = ?', [id]);
      return row ? { id: str(row[0]), name: str(row[1]), createdAt: str(row[2]) } : null;
    },
    addMember(workspaceId: string, userId: string, role: Role, at: string): boolean {
      return (
        db.run(
          `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (workspace_id, user_id) DO NOTHING`,
          [workspaceId, userId, role, at],
        ) > 0
      );
    },
    removeMember(workspaceId: string, userId: string): boolean {
      return (
        db.run('DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId]) > 0
      );
    },
    ownerCount(workspaceId: string): number {
      const row = db.first("SELECT count(*) FROM memberships WHERE workspace_id = ? AND role = 'owner'", [
        workspaceId,
      ]);
      return Number(row?.[0] ?? 0);
    },
    role(workspaceId: string, userId: string): Role | null {
      const row = db.first('SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?', [
        workspaceId,
        userId,
      ]);
      return row ? (str(row[0]) as Role) : null;
    },
    listForUser(userId: string): MembershipRecord[] {
      return db
        .all(
          `SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
           WHERE m.user_id = ? ORDER BY w.created_at, w.rowid`,
          [userId],
        )
        .map((r) => ({ organizationId: str(r[0]), name: str(r[1]), role: str(r[2]) as Role }));
    },
    members(workspaceId: string): MemberRecord[] {
      return db
        .all(
          `SELECT u.id, u.email, u.name, u.image_url, m.role, m.created_at
           FROM memberships m JOIN users u ON u.id = m.user_id
           WHERE m.workspace_id = ? ORDER BY m.created_at, m.rowid`,
          [workspaceId],
        )
        .map((r) => {
          const member: MemberRecord = {
            userId: str(r[0]),
            email: str(r[1]),
            name: str(r[2]),
            role: str(r[4]) as Role,
            joinedAt: str(r[5]),
          };
          const imageUrl = optStr(r[3]);
          if (imageUrl !== undefined) member.imageUrl = imageUrl;
          return member;
        });
    },
  };
}
export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>;
