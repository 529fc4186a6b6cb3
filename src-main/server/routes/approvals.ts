import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  ApprovalParamsSchema,
  ApprovalResponseSchema,
  ApprovalsQuerySchema,
  ApprovalsResponseSchema,
  DecideApprovalBodySchema,
  type ApprovalDecidedBy,
} from '../../../src-shared/approvals.js';
import {
  ApprovalRulesPreviewBodySchema,
  ApprovalRulesPreviewSchema,
  WorkspaceParamsSchema,
} from '../../../src-shared/accounts.js';
import { isId } from '../../../src-shared/ids.js';
import { publicApproval } from '../../approvals/service.js';
import { forbidden, notFound } from '../../errors.js';
import { authHooks, type Principal } from '../auth/authenticate.js';
import { principalOf, userOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/**
 * One inbox for what agents ask before they act: any member or key of the workspace lists the
 * pending requests; a signed-in member decides, or a key an owner allowed to (`canApprove`).
 */
export function approvalRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either, userOnly } = authHooks(ctx.auth);

  /** A request the caller may see: 404 when there is none, 403 in another workspace. */
  async function visibleApproval(principal: Principal, id: string) {
    if (!isId('approval', id)) throw notFound('There is no such request');
    const approval = await ctx.approvals.find(id);
    if (!(await ctx.access.stillAllowed(principal, approval.workspaceId))) {
      throw forbidden('This request belongs to a workspace you do not have access to');
    }
    return approval;
  }

  /** Who decides: a member by name, or a key an owner let decide; 403 for any other key. */
  async function decider(principal: Principal): Promise<ApprovalDecidedBy> {
    if (principal.kind === 'user') {
      const user = await ctx.storage.repos.users.findById(principal.userId);
      return { kind: 'user', userId: principal.userId, name: user?.name ?? '' };
    }
    const key = await ctx.storage.repos.apiKeys.findById(principal.keyId);
    if (!key?.canApprove) {
      throw forbidden(
        'This API key may list requests but not decide them: sign in, or use a key an owner created with canApprove',
      );
    }
    return { kind: 'apiKey', keyId: key.id, label: key.label };
  }

  api.get(
    '/api/approvals',
    {
      ...either,
      schema: {
        summary: 'What agents ask, waiting for a decision',
        description:
          "The workspace's pending requests, oldest first (with `sessionId`, that session's only): in a workspace whose `approvals` setting is `ask`, what an agent asks before it acts waits here, and its session's `agentState` is `needs_input`. Each request is rejected at `expiresAt` unless decided first.",
        tags: ['approvals'],
        querystring: ApprovalsQuerySchema,
        response: { 200: ApprovalsResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { organizationId, sessionId } = request.query;
      const workspaceId = await ctx.access.workspaceFor(principal, organizationId);
      if (sessionId !== undefined) {
        await ctx.access.session(principal, sessionId, workspaceId, (id) =>
          ctx.storage.repos.sessions.find(id),
        );
      }
      return { approvals: await ctx.approvals.pending(workspaceId, sessionId) };
    },
  );

  api.get(
    '/api/approvals/:approvalId',
    {
      ...either,
      schema: {
        summary: 'One request, pending or decided',
        description:
          'Once decided: `decidedAt`, `decision`, `decidedBy`, and the `optionId` and `message` sent.',
        tags: ['approvals'],
        params: ApprovalParamsSchema,
        response: { 200: ApprovalResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
    },
    async (request) => ({
      approval: publicApproval(await visibleApproval(principalOf(request), request.params.approvalId)),
    }),
  );

  api.post(
    '/api/approvals/:approvalId',
    {
      ...either,
      schema: {
        summary: 'Decide what an agent asked',
        description:
          '`{ "optionId": … }` chooses one of the request\'s options; `{ "decision": KIND }` the first of its options of that kind (`reject_once` and `reject_always` stand in for each other, and are always possible). `message` goes with a rejection and is passed on where the agent\'s protocol carries one. A signed-in member decides, or an API key an owner created with `canApprove` (403 for any other key). 409 once decided (by anyone, the time-out, or the run\'s end).',
        tags: ['approvals'],
        params: ApprovalParamsSchema,
        body: DecideApprovalBodySchema,
        response: { 200: ApprovalResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 429, 500, 503) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const approval = await visibleApproval(principal, request.params.approvalId);
      const by = await decider(principal);
      return { approval: await ctx.sessionCommands.decide(approval, request.body, by) };
    },
  );

  api.post(
    '/api/workspaces/:organizationId/approval-rules/preview',
    {
      ...userOnly,
      schema: {
        summary: 'Try approval rules on recent requests',
        description:
          "Members, signed in. Draft `approvalRules` (checked as `PUT …/agent` checks them) tried on the workspace's latest 50 requests, decided or not, as if each were asked now: per rule, how many it would have decided (it matched first) and up to 3 of their titles; `rest`, how many no rule matches and what `approvals` (the body's, else the workspace's) decides for them. Nothing is saved.",
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: ApprovalRulesPreviewBodySchema,
        response: { 200: ApprovalRulesPreviewSchema, ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      const { organizationId } = request.params;
      await ctx.access.requireRole(userOf(request).userId, organizationId, 'member');
      return ctx.approvals.preview(organizationId, request.body);
    },
  );
}
