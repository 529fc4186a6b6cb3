import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  GhStatusResponseSchema,
  OpenPullRequestBodySchema,
  PullRequestResponseSchema,
} from '../../../src-shared/pull-requests.js';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import { createPullRequests, type PullRequestOutcome } from '../../pull-requests/service.js';
import { toSummary } from '../../sessions/summary.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, userOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

const answer = (outcome: PullRequestOutcome) => ({
  pullRequest: outcome.pullRequest,
  session: toSummary(outcome.row, 'both'),
});

/** Opening a session's pull request (push + `gh pr create`) and refreshing its status (`gh pr view`). */
export function pullRequestRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either, userOnly } = authHooks(ctx.auth);
  const pullRequests = createPullRequests({
    service: ctx.sessions,
    repos: ctx.storage.repos,
    agents: ctx.agents,
    serverEnv: ctx.agentEnv,
    logger: ctx.logger,
  });
  const find = (id: string) => ctx.storage.repos.sessions.find(id);

  api.post(
    '/api/sessions/:sessionId/pull-request',
    {
      ...userOnly,
      schema: {
        summary: "Open the session's pull request",
        description:
          "Signed-in members only (the push and the pull request use the credentials of the user running Session Desk). Pushes the session's branch from its sandbox and opens a pull request into its base branch with the GitHub CLI. 201 when opened; 200 with the one the session already has. 409: nothing to open (no repository, no branch, no commits, the agent still working); 424: gh missing or not signed in; 502: the push or gh failed. The message says what to do.",
        tags: ['pull requests'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        body: OpenPullRequestBodySchema.nullish(),
        response: {
          200: PullRequestResponseSchema,
          201: PullRequestResponseSchema,
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 424, 429, 500, 502, 503),
        },
      },
    },
    async (request, reply) => {
      const row = await ctx.access.session(
        userOf(request),
        request.params.sessionId,
        request.query.organizationId,
        find,
      );
      const outcome = await pullRequests.open(row, request.body ?? {});
      return reply.code(outcome.created ? 201 : 200).send(answer(outcome));
    },
  );

  api.get(
    '/api/pull-requests/tool',
    {
      ...either,
      schema: {
        summary: 'Whether pull requests can be opened here',
        description:
          'Key or cookie. Whether the server finds the GitHub CLI (`gh`) that opens and reads pull requests, and if not, what to do; found without running it, so whether it is signed in shows only when it is used (424).',
        tags: ['pull requests'],
        response: { 200: GhStatusResponseSchema, ...errorResponses(401, 429, 500, 503) },
      },
    },
    async () => pullRequests.tool(),
  );

  api.post(
    '/api/sessions/:sessionId/pull-request/refresh',
    {
      ...either,
      schema: {
        summary: "Refresh the session's pull-request status",
        description:
          'Key or cookie, like update. Reads the pull request from GitHub (`gh pr view`) and records its status (`draft`, `open`, `merged` with its merge time, `closed`). 409: no pull request, or not on github.com; 424: gh missing or not signed in; 502: gh failed.',
        tags: ['pull requests'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: {
          200: PullRequestResponseSchema,
          ...errorResponses(401, 403, 404, 409, 424, 429, 500, 502, 503),
        },
      },
    },
    async (request) => {
      const row = await ctx.access.session(
        principalOf(request),
        request.params.sessionId,
        request.query.organizationId,
        find,
      );
      return answer(await pullRequests.refresh(row));
    },
  );
}
