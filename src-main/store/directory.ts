import type { Db } from './sqljs.js';
import { num, str } from './row.js';

/** A user as `sessiondesk user list` shows them: with how many workspaces they belong to. */
export interface UserListingRecord {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  workspaces: number;
}

/** A workspace as `sessiondesk workspace list` shows it: its owners by email, and its counts. */
export interface WorkspaceListingRecord {
  organizationId: string;
  name: string;
  createdAt: string;
  owners: string[];
  members: number;
  sessions: number;
}

/**
 * Everyone and every workspace, for the administrator's listings: read-only views across the
 * accounts tables, oldest first (store-postgres/directory.ts answers the same on PostgreSQL).
 */
export function createDirectoryRepository(db: Db) {
  return {
    users(): UserListingRecord[] {
      return db
        .all(
          `SELECT u.id, u.email, u.name, u.created_at,
             (SELECT count(*) FROM memberships m WHERE m.user_id = u.id)
           FROM users u ORDER BY u.created_at, u.rowid`,
        )
        .map((r) => ({
          id: str(r[0]),
          email: str(r[1]),
          name: str(r[2]),
          createdAt: str(r[3]),
          workspaces: num(r[4]),
        }));
    },
    workspaces(): WorkspaceListingRecord[] {
      return db
        .all(
          `SELECT w.id, w.name, w.created_at,
             (SELECT group_concat(u.email, ' ') FROM memberships m JOIN users u ON u.id = m.user_id
               WHERE m.workspace_id = w.id AND m.role = 'owner'),
             (SELECT count(*) FROM memberships m WHERE m.workspace_id = w.id),
             (SELECT count(*) FROM sessions s WHERE s.workspace_id = w.id)
           FROM workspaces w ORDER BY w.created_at, w.rowid`,
        )
        .map((r) => ({
          organizationId: str(r[0]),
          name: str(r[1]),
          createdAt: str(r[2]),
          owners: r[3] === null ? [] : str(r[3]).split(' '),
          members: num(r[4]),
          sessions: num(r[5]),
        }));
    },
  };
}
