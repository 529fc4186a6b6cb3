import { z } from 'zod';

/**
 * A check of a workspace's agent, run as a session would run it (`POST
 * /api/workspaces/{org}/agent/check`, `sessiondesk agent check`): its program, the sign-in its
 * session home gets, and one tiny prompt through the workspace's network, answered within
 * AGENT_CHECK_DEADLINE_MS.
 */

/** The whole check answers within this time, whatever the agent does. */
export const AGENT_CHECK_DEADLINE_MS = 30_000;

/** What the check asks the model: an answer needs no tool and no file. */
export const AGENT_CHECK_PROMPT = 'Reply with OK';

/**
 * `program`: found, and its version asked in the sandbox. `credentials`: what signs it in, as its
 * session's home and environment will hold it. `prompt`: one prompt run in the sandbox through
 * the workspace's network. `simulated`: the demo agent's only step.
 */
export const AGENT_CHECK_STEPS = ['program', 'credentials', 'prompt', 'simulated'] as const;

export const AgentCheckStepSchema = z.object({
  name: z.enum(AGENT_CHECK_STEPS),
  ok: z.boolean(),
  detail: z.string().describe('What was found or happened, in a sentence or two.'),
  endpoint: z
    .string()
    .optional()
    .describe("The model API's URL the agent was to reach (from its configuration, or its default)."),
  fix: z
    .string()
    .optional()
    .describe('With a failure: what to do (the install command, the credential to add, the host to allow).'),
});
export type AgentCheckStep = z.infer<typeof AgentCheckStepSchema>;

export const AgentCheckSchema = z.object({
  ok: z.boolean().describe('Whether every step passed.'),
  agent: z.string().describe("The agent checked, by its name (the workspace's choice)."),
  steps: z.array(AgentCheckStepSchema),
});
export type AgentCheck = z.infer<typeof AgentCheckSchema>;

/** How each step is named where people read it (Settings › Agent, `sessiondesk agent check`). */
export const AGENT_CHECK_STEP_LABELS: Record<AgentCheckStep['name'], string> = {
  program: 'Program',
  credentials: 'Credentials',
  prompt: 'Test prompt',
  simulated: 'Simulated',
};

/** The admin channel's route for `sessiondesk agent check` while a server holds the data directory. */
export const AGENT_CHECK_ADMIN_PATH = '/api/admin/agent-check';
export const AgentCheckAdminBodySchema = z.strictObject({ organizationId: z.string().max(100) });
