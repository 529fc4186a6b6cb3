import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SearchQuerySchema, SearchResponseSchema } from '../../../src-shared/search.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

export function searchRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either } = authHooks(ctx.auth);

  api.get(
    '/api/search',
    {
      ...either,
      schema: {
        summary: 'Search transcripts',
        description:
          "Full-text search over every message of a workspace's sessions (prompts, answers, thinking, tool inputs and outputs, results), best matches first.",
        tags: ['sessions'],
        querystring: SearchQuerySchema,
        response: { 200: SearchResponseSchema, ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request) => {
      const { organizationId, q, agent, repository, limit, cursor } = request.query;
      const workspaceId = ctx.access.workspaceFor(principalOf(request), organizationId);
      return ctx.search.search({ workspaceId, q, agent, repository, limit, cursor });
    },
  );
}
