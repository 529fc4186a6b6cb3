import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { WorkspaceParamsSchema } from '../../../src-shared/accounts.js';
import {
  HistorySourceParamsSchema,
  HistorySourceResponseSchema,
  HistorySourcesResponseSchema,
  NewHistorySourceBodySchema,
  UpdateHistorySourceBodySchema,
} from '../../../src-shared/history.js';
import { isAdministrator, requireAdministrator } from '../../accounts/administrator.js';
import { createHistorySources } from '../../history/service.js';
import { folderRules } from '../../history/source-folder.js';
import { authHooks } from '../auth/authenticate.js';
import { userOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/**
 * Settings' history sources: the agent CLIs' folders a workspace imports and follows. The
 * sign-in cookie only; members see them, owners add, pause and remove them.
 */
export function historyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { userOnly } = authHooks(ctx.auth);
  const sources = createHistorySources(
    { dataDir: ctx.dataDir, storage: ctx.storage, clock: ctx.clock, events: ctx.events },
    () => folderRules(ctx.agentEnv, ctx.dataDir, ctx.agents.sandboxRoot),
  );

  const base = '/api/workspaces/:organizationId/history-sources';
  api.get(
    base,
    {
      ...userOnly,
      schema: {
        summary: 'List the history sources',
        description:
          "The agent CLI folders this workspace imports and follows, with their counts; for the administrator (when an owner of the workspace), the CLIs' folders found in their default places that are not sources yet.",
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        response: { 200: HistorySourcesResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
      },
    },
    async (request) => {
      const { userId } = userOf(request);
      const { organizationId } = request.params;
      await ctx.access.requireRole(userId, organizationId, 'member');
      const administrator = await isAdministrator(ctx.storage.repos, userId);
      const mayAdd =
        (await ctx.storage.repos.workspaces.role(organizationId, userId)) === 'owner' && administrator;
      return {
        sources: await sources.list(organizationId),
        found: mayAdd ? await sources.found(organizationId, ctx.agentEnv) : [],
        // A team server's database takes no `history import` (refused with --database).
        ...(ctx.store ? { importCommand: sources.importCommand(organizationId, administrator) } : {}),
      };
    },
  );

  api.post(
    base,
    {
      ...userOnly,
      schema: {
        summary: 'Add a history source',
        description:
          "The administrator only (the account made at first-run setup), when an owner of the workspace: which of the machine's folders are read is the installation's decision, never any account's (403 otherwise). The folder must be that CLI's: it holds the CLI's conversations where the CLI writes them, or only the empty folders a fresh install makes; Session Desk's own data and sandboxes are never one. Otherwise 400, its message saying why in words. The server follows it from its next scan; its sessions are imported as the owner.",
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: NewHistorySourceBodySchema,
        response: { 201: HistorySourceResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
      },
    },
    async (request, reply) => {
      const { userId } = userOf(request);
      await ctx.access.requireRole(userId, request.params.organizationId, 'owner');
      await requireAdministrator(
        ctx.storage.repos,
        userId,
        'add a folder of this machine as a history source',
      );
      const { kind, rootDir } = request.body;
      const source = await sources.add(request.params.organizationId, userId, kind, rootDir);
      return reply.code(201).send({ source });
    },
  );

  api.patch(
    `${base}/:sourceId`,
    {
      ...userOnly,
      schema: {
        summary: 'Pause or resume a history source',
        tags: ['dashboard'],
        params: HistorySourceParamsSchema,
        body: UpdateHistorySourceBodySchema,
        response: { 200: HistorySourceResponseSchema, ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
    },
    async (request) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      const { organizationId, sourceId } = request.params;
      return { source: await sources.setPaused(organizationId, sourceId, request.body.paused) };
    },
  );

  api.delete(
    `${base}/:sourceId`,
    {
      ...userOnly,
      schema: {
        summary: 'Remove a history source',
        description:
          "Owners only. Forgets the folder; imported sessions stay and the CLI's files are untouched.",
        tags: ['dashboard'],
        params: HistorySourceParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      await sources.remove(request.params.organizationId, request.params.sourceId);
      return reply.code(204).send(null);
    },
  );
}
