import { z } from 'zod';
import { badRequest, notFound } from '../errors.js';
import type { Db } from '../store/sqljs.js';
import { num, str } from '../store/row.js';

export const UserListingSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  createdAt: z.string(),
  workspaces: z.number().int(),
});
export type UserListing = z.infer<typeof UserListingSchema>;

export const WorkspaceListingSchema = z.object({
  organizationId: z.string(),
  name: z.string(),
  createdAt: z.string(),
  owners: z.array(z.string()).describe('Owners by email.'),
  members: z.number().int(),
  sessions: z.number().int(),
});
export type WorkspaceListing = z.infer<typeof WorkspaceListingSchema>;

/**
 * Everyone and every workspace of a data directory, for `sessiondesk user list` and
 * `workspace list`: read-only views across the accounts tables, oldest first.
 */
export function createDirectory(db: Db) {
  const directory = {
    users(): UserListing[] {
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
    workspaces(): WorkspaceListing[] {
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

    /**
     * The workspace a person named by its id or its name (in any case when no name matches
     * exactly); when none or several match, an error listing each workspace's name and id.
     */
    workspaceNamed(named: string): WorkspaceListing {
      const all = directory.workspaces();
      const byId = all.find((w) => w.organizationId === named);
      if (byId) return byId;
      const wanted = named.trim();
      let matches = all.filter((w) => w.name === wanted);
      if (matches.length === 0) matches = all.filter((w) => w.name.toLowerCase() === wanted.toLowerCase());
      if (matches.length === 1) return matches[0]!;
      const listed = (list: WorkspaceListing[]) =>
        list.map((w) => `\n  ${JSON.stringify(w.name)} (${w.organizationId})`).join('');
      if (matches.length > 1) {
        throw badRequest(
          `${matches.length} workspaces are named ${JSON.stringify(wanted)}; name one by its id:${listed(matches)}`,
        );
      }
      if (all.length === 0) {
        throw notFound(
          `There is no workspace ${JSON.stringify(named)}: this data directory has none yet ` +
            '(make one with "sessiondesk workspace create").',
        );
      }
      throw notFound(
        `There is no workspace ${JSON.stringify(named)} (by id or by name). The workspaces are:${listed(all)}`,
      );
    },
  };
  return directory;
}
