import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SessionSummaryResponseSchema } from '../../../src-shared/session-summary.js';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import { checkedSummary } from '../../sessions/checked-summary.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/**
 * `GET /api/sessions/{id}/summary`: a session's summary form and tasks, from the database
 * alone (its transcript is not read), so a page can show a session of any size at once and
 * read its messages in pages.
 */
export function sessionSummaryRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { either } = authHooks(ctx.auth);
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/sessions/:sessionId/summary',
    {
      ...either,
      schema: {
        summary: 'A session without its messages',
        description:
          'The summary form (with both previews, as in the list) and the tasks, without reading the transcript; read the messages with `GET /api/sessions/{sessionId}/messages`. Same credentials and access rules as get.',
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: { 200: SessionSummaryResponseSchema, ...errorResponses(401, 403, 404, 429, 500) },
      },
    },
    async (request) => {
      const row = await ctx.access.session(
        principalOf(request),
        request.params.sessionId,
        request.query.organizationId,
        (id) => ctx.storage.repos.sessions.find(id),
      );
      const summary = checkedSummary(row, 'both', ctx.logger);
      // Logged by checkedSummary; the answer is the generic 500.
      if (!summary) throw new Error(`Session ${row.id} cannot be shown in the API's form`);
      return { session: { ...summary, tasks: await ctx.storage.repos.sessions.tasks(row.id) } };
    },
  );
}
