import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ContinuationChoicesResponseSchema } from '../../../src-shared/continuation.js';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import { continueChoices } from '../../sessions/continue-choices.js';
import { authHooks } from '../auth/authenticate.js';
import { userOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** Where a follow-up to a session imported from an agent CLI's files can go on. */
export function continuationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { userOnly } = authHooks(ctx.auth);

  api.get(
    '/api/sessions/:sessionId/continuation',
    {
      ...userOnly,
      schema: {
        summary: 'Where an imported session can go on',
        description:
          "Signed-in users only, like a follow-up. For a session imported from an agent CLI's files: whether a follow-up with `continueIn` `original` or `sandbox` would start now, by the checks the follow-up itself meets (its CLI installed here, the folder still there and one an agent may work in, the administrator asking, a repository to clone), and why not. A session that was not imported: 409.",
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: {
          200: ContinuationChoicesResponseSchema,
          ...errorResponses(400, 401, 403, 404, 409, 429, 500),
        },
      },
    },
    async (request) => {
      const principal = userOf(request);
      const session = await ctx.access.session(
        principal,
        request.params.sessionId,
        request.query.organizationId,
        (id) => ctx.storage.repos.sessions.find(id),
      );
      return continueChoices(ctx, session, principal.userId);
    },
  );
}
