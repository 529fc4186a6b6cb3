import { isId } from '../../src-shared/ids.js';
import { AppError, forbidden, notFound } from '../errors.js';
import type { Repos } from '../store/storage.js';
import type { Principal } from './auth/authenticate.js';

/**
 * The access rules of the API, in one place: every route that reads or changes a workspace
 * or a session (the JSON routes and the event streams alike) asks here, so they cannot
 * disagree.
 */
export interface Access {
  /** The workspace a request acts in: the key's own, or one the user is a member of. */
  workspaceFor(principal: Principal, organizationId: string | undefined): Promise<string>;
  /**
   * A session the caller may see: 404 when there is none (or the id is malformed), 403 when
   * it is in another workspace or `organizationId` names another one. `lookup` reads what is
   * needed of it (its row, or a cached response) with its workspace.
   */
  session<T extends { workspaceId: string }>(
    principal: Principal,
    sessionId: string,
    organizationId: string | undefined,
    lookup: (sessionId: string) => T | null | undefined | Promise<T | null | undefined>,
  ): Promise<T>;
  /** Whether the principal may still see this workspace (a stream asks again as it goes). */
  stillAllowed(principal: Principal, workspaceId: string): Promise<boolean>;
  /**
   * For the dashboard's workspace pages: 403 unless the user is a member (or an owner, when
   * `needed`); answers the role they have.
   */
  requireRole(
    userId: string,
    organizationId: string,
    needed: 'member' | 'owner',
  ): Promise<'member' | 'owner'>;
}

export function createAccess(repos: Repos): Access {
  async function workspaceFor(principal: Principal, organizationId: string | undefined): Promise<string> {
    if (principal.kind === 'apiKey') {
      if (organizationId !== undefined && organizationId !== principal.workspaceId) {
        throw forbidden('This API key belongs to another workspace');
      }
      return principal.workspaceId;
    }
    if (organizationId !== undefined) {
      if (!(await repos.workspaces.role(organizationId, principal.userId))) throw forbidden();
      return organizationId;
    }
    const workspaces = await repos.workspaces.listForUser(principal.userId);
    if (workspaces.length === 1) return (workspaces[0] as { organizationId: string }).organizationId;
    throw new AppError(
      400,
      'organization_required',
      workspaces.length === 0
        ? 'You are not a member of any workspace yet'
        : 'You belong to several workspaces: pass organizationId',
      [{ path: 'query.organizationId', message: 'is required' }],
    );
  }

  async function stillAllowed(principal: Principal, workspaceId: string): Promise<boolean> {
    return principal.kind === 'apiKey'
      ? principal.workspaceId === workspaceId
      : (await repos.workspaces.role(workspaceId, principal.userId)) !== null;
  }

  return {
    workspaceFor,
    stillAllowed,
    async requireRole(userId, organizationId, needed) {
      const role = await repos.workspaces.role(organizationId, userId);
      if (role === null) throw forbidden();
      if (needed === 'owner' && role !== 'owner')
        throw forbidden('Only an owner of this workspace can do that');
      return role;
    },
    async session(principal, sessionId, organizationId, lookup) {
      if (organizationId !== undefined) await workspaceFor(principal, organizationId);
      const found = isId('session', sessionId) ? await lookup(sessionId) : null;
      if (!found) throw notFound('Session not found');
      const allowed =
        (organizationId === undefined || organizationId === found.workspaceId) &&
        (await stillAllowed(principal, found.workspaceId));
      if (!allowed) throw forbidden('This session belongs to a workspace you do not have access to');
      return found;
    },
  };
}
