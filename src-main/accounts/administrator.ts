import { forbidden } from '../errors.js';
import { DEMO_EMAILS } from '../demo/people.js';
import type { Repos } from '../store/storage.js';

/**
 * The administrator of an installation decides what of the machine its agents reach: which
 * programs run (`sessiondesk agent-command set`), which folders are imported and followed, and
 * whether an agent works in a person's own folder. Whoever runs the `sessiondesk` command on
 * the machine is the administrator; in the dashboard, the account created first (the one
 * first-run setup makes; the demo's people never are). Other accounts, owners of workspaces
 * included, reach only what the administrator chose.
 */
export async function isAdministrator(repos: Repos, userId: string): Promise<boolean> {
  return (await repos.users.firstCreated(DEMO_EMAILS))?.id === userId;
}

/** Throws 403, saying who may, unless `userId` is the administrator's account. */
export async function requireAdministrator(repos: Repos, userId: string, what: string): Promise<void> {
  if (await isAdministrator(repos, userId)) return;
  throw forbidden(
    `Only the administrator of this Session Desk (the account made at first-run setup, or the sessiondesk command on the machine) can ${what}.`,
  );
}
