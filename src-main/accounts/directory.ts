import { z } from 'zod';
import { badRequest, notFound } from '../errors.js';
import type { Repos } from '../store/storage.js';

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
 * Everyone and every workspace, for `sessiondesk user list` and `workspace list` (and the
 * administrator's API): the directory repository of either database, oldest first.
 */
export function createDirectory(repos: Pick<Repos, 'directory'>) {
  const directory = {
    users: (): Promise<UserListing[]> => repos.directory.users(),
    workspaces: (): Promise<WorkspaceListing[]> => repos.directory.workspaces(),

    /**
     * The workspace a person named by its id or its name (in any case when no name matches
     * exactly); when none or several match, an error listing each workspace's name and id.
     */
    async workspaceNamed(named: string): Promise<WorkspaceListing> {
      const all = await directory.workspaces();
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
