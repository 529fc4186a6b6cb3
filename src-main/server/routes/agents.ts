import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AgentKindsResponseSchema } from '../../../src-shared/accounts.js';
import { authHooks } from '../auth/authenticate.js';
import type { AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** The agent kinds this server can run, for choosing one in Settings. */
export function agentRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { userOnly } = authHooks(ctx.auth);

  api.get(
    '/api/agents',
    {
      ...userOnly,
      schema: {
        summary: 'Agent kinds',
        description:
          "Every agent kind, and for the agent CLIs whether the program is installed on the server (its PATH, or SESSIONDESK_CLAUDE_BIN, SESSIONDESK_CODEX_BIN, SESSIONDESK_GEMINI_BIN), where, and its version (asked in the agents' sandbox). A program in a folder agents write, or in Session Desk's data, is not found: its `problem` says why.",
        tags: ['dashboard'],
        response: { 200: AgentKindsResponseSchema, ...errorResponses(400, 401, 500) },
      },
    },
    async () => ({ agents: await ctx.agents.describeAgents(ctx.agentEnv) }),
  );
}
