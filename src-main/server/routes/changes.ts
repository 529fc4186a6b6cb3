import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SessionChangesResponseSchema } from '../../../src-shared/changes.js';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import { notFound } from '../../errors.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** What a session's agent changed in its sandbox, from git. */
export function changesRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either } = authHooks(ctx.auth);

  api.get(
    '/api/sessions/:sessionId/changes',
    {
      ...either,
      schema: {
        summary: "A session's changes",
        description:
          "The sandbox's changes against the session's base branch, committed and not (staged, unstaged, untracked), from git: each file with its status, line counts and patch. Patches are capped (256 KiB per file, 2 MiB in all, 3,000 files) and marked `truncated`; counts stay exact. A session without a repository or whose sandbox is gone answers `available: false` with a reason.",
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: { 200: SessionChangesResponseSchema, ...errorResponses(401, 403, 404, 429, 500) },
      },
    },
    async (request) => {
      const { sessionId } = request.params;
      await ctx.access.session(principalOf(request), sessionId, request.query.organizationId, (id) =>
        ctx.storage.repos.sessions.find(id),
      );
      const answer = await ctx.changes.of(sessionId);
      if (!answer) throw notFound('Session not found');
      return answer;
    },
  );
}
