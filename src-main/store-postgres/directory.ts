import type { UserListingRecord, WorkspaceListingRecord } from '../store/directory.js';
import { text, type Queryable } from './rows.js';

/**
 * The administrator's listings on PostgreSQL: the `Storage` face of `store/directory.ts`.
 * Ties of `created_at` go by the order rows were made (`made_order`, as sql.js's `rowid`);
 * owners in the order they joined.
 */
export function postgresDirectory(sql: Queryable) {
  return {
    async users(): Promise<UserListingRecord[]> {
      const rows = await sql`
        SELECT u.id, u.email, u.name, u.created_at,
          (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.id) AS workspaces
        FROM users u ORDER BY u.created_at, u.made_order`;
      return rows.map((r) => ({
        id: text(r.id),
        email: text(r.email),
        name: text(r.name),
        createdAt: text(r.created_at),
        workspaces: Number(r.workspaces),
      }));
    },
    async workspaces(): Promise<WorkspaceListingRecord[]> {
      const rows = await sql`
        SELECT w.id, w.name, w.created_at,
          (SELECT coalesce(array_agg(u.email ORDER BY m.created_at, m.made_order), '{}')
             FROM memberships m JOIN users u ON u.id = m.user_id
             WHERE m.workspace_id = w.id AND m.role = 'owner') AS owners,
          (SELECT count(*)::int FROM memberships m WHERE m.workspace_id = w.id) AS members,
          (SELECT count(*)::int FROM sessions s WHERE s.workspace_id = w.id) AS sessions
        FROM workspaces w ORDER BY w.created_at, w.made_order`;
      return rows.map((r) => ({
        organizationId: text(r.id),
        name: text(r.name),
        createdAt: text(r.created_at),
        owners: (r.owners as unknown[]).map(text),
        members: Number(r.members),
        sessions: Number(r.sessions),
      }));
    },
  };
}
