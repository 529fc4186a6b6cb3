import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  SEARCH_PREFIX_MIN,
  SEARCH_WORDS_MAX,
  SearchQuerySchema,
  SearchResponseSchema,
} from '../../../src-shared/search.js';
import { SEARCH_TIME_LIMIT_MS } from '../../search/search-index.js';
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
          "Full-text search over every message of a workspace's sessions (prompts, answers, thinking, tool inputs and outputs, results), best matches first. " +
          `Limits: at most ${SEARCH_WORDS_MAX} words (a phrase counts each of its words; a repeated word counts once) and prefixes of at least ${SEARCH_PREFIX_MIN} letters or digits, else 400. ` +
          `A search runs on a thread of its own (on a team server, in PostgreSQL), one at a time per server process: one running longer than the server's time limit (${SEARCH_TIME_LIMIT_MS / 1000} s unless set otherwise) is stopped and answered 503, as is one finding too many searches waiting. ` +
          '`indexing` says whether the index held every message of the workspace when the search ran: while it did not (a first index, an import), hits may be missing.',
        tags: ['sessions'],
        querystring: SearchQuerySchema,
        response: { 200: SearchResponseSchema, ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request) => {
      const { organizationId, q, agent, repository, limit, cursor } = request.query;
      const workspaceId = await ctx.access.workspaceFor(principalOf(request), organizationId);
      return ctx.search.search({ workspaceId, q, agent, repository, limit, cursor });
    },
  );
}
