import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { REVIEW_LIMITS, ReviewBodySchema, SessionReviewsResponseSchema } from '../../../src-shared/review.js';
import { OrgQuerySchema, SessionParamsSchema, SessionResponseSchema } from '../../../src-shared/sessions.js';
import { notFound } from '../../errors.js';
import { sentReviews } from '../../sessions/review.js';
import { toSummary } from '../../sessions/summary.js';
import { settledRow } from '../../sessions/transcript-reads.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, userOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** Comments on lines of a session's changes, sent to its agent as one follow-up. */
export function reviewRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either, userOnly } = authHooks(ctx.auth);
  const find = (id: string) => ctx.storage.repos.sessions.find(id);

  api.post(
    '/api/sessions/:sessionId/review',
    {
      ...userOnly,
      schema: {
        summary: 'Send a review',
        description: `Signed-in users only, like a follow-up. Each comment names a line (or up to ${REVIEW_LIMITS.rangeLines} lines of one hunk, with \`startLine\`) of the session's changes as \`GET …/changes\` shows them now: \`side: "new"\` (default) numbers lines in the sandbox's file, \`"old"\` on the base. A comment that names none: 400, its detail \`body.comments.<i>\`. The agent is sent one follow-up quoting each commented line with its path and number and the comment, then \`message\`; the transcript's user message keeps the comments as \`review\`. Answers with the summary form.`,
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        body: ReviewBodySchema,
        response: {
          201: SessionResponseSchema,
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = userOf(request);
      const row = await ctx.access.session(
        principal,
        request.params.sessionId,
        request.query.organizationId,
        find,
      );
      const updated = await ctx.sessionCommands.review(row, request.body, principal.userId);
      return reply.code(201).send({ session: toSummary(updated, 'both') });
    },
  );

  api.get(
    '/api/sessions/:sessionId/review',
    {
      ...either,
      schema: {
        summary: "A session's reviews",
        description:
          'Every review sent in the session, oldest first: its comments, each with the lines it quoted, and its message. Key or cookie, like get.',
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: { 200: SessionReviewsResponseSchema, ...errorResponses(401, 403, 404, 429, 500) },
      },
    },
    async (request) => {
      const { sessionId } = request.params;
      await ctx.access.session(principalOf(request), sessionId, request.query.organizationId, find);
      const row = await settledRow(ctx, sessionId);
      if (!row) throw notFound('Session not found');
      return { reviews: await sentReviews(ctx, row) };
    },
  );
}
