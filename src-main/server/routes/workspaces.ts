import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  AgentSettingsResponseSchema,
  AgentSettingsSchema,
  CreatedKeyResponseSchema,
  InvitationParamsSchema,
  InvitationResponseSchema,
  KeyParamsSchema,
  KeysResponseSchema,
  MemberParamsSchema,
  MemberResponseSchema,
  MembersResponseSchema,
  NewKeyBodySchema,
  NewMemberBodySchema,
  NewWorkspaceBodySchema,
  SETUP_AGENTS,
  SetupBodySchema,
  SetupResponseSchema,
  SetupStatusSchema,
  WorkspaceParamsSchema,
  WorkspaceResponseSchema,
  WorkspacesResponseSchema,
  type SetupAgent,
} from '../../../src-shared/accounts.js';
import {
  AGENT_CHECK_DEADLINE_MS,
  AGENT_CHECK_PROMPT,
  AgentCheckSchema,
} from '../../../src-shared/agent-check.js';
import { checkAgentChoice } from '../../agents/run/agent-choice.js';
import { badRequest, conflict, forbidden } from '../../errors.js';
import { seedDemo } from '../../demo/seed.js';
import { DEMO, isDemoAccount, ownAccountCount } from '../../demo/people.js';
import { authHooks } from '../auth/authenticate.js';
import { localStore, userOf, type AppContext } from '../context.js';
import { startSignIn } from './auth.js';
import { errorResponses } from './error-responses.js';

/**
 * The dashboard's own endpoints: first-run setup, workspaces, members and API keys. All but
 * setup need the sign-in cookie; an API key is refused (400), so a leaked key can never
 * mint more keys or change who is in a workspace.
 */
export function workspaceRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { accounts } = ctx;
  const { repos } = ctx.storage;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { userOnly, userOnlyKeysForbidden } = authHooks(ctx.auth);

  /** What the demo's accounts may not do, in words, or null for any other account. */
  async function demoLimit(userId: string, what: string): Promise<string | null> {
    const user = await repos.users.findById(userId);
    return user && isDemoAccount(user.email)
      ? `The demo's accounts ${what}: create your own account for that.`
      : null;
  }

  /** The demo's accounts may do only what the demo shows: `what` says what they may not. */
  async function refuseDemoAccount(userId: string, what: string): Promise<void> {
    const limit = await demoLimit(userId, what);
    if (limit !== null) throw forbidden(limit);
  }

  /** What a demo account is told of choosing another agent, before it tries and after. */
  const DEMO_AGENT_ONLY = 'run the demo agent only';

  /** The workspace's agent as `userId` sees it: a demo account is told what it may not choose. */
  async function agentSettingsAs(userId: string, organizationId: string) {
    const demoOnly = await demoLimit(userId, DEMO_AGENT_ONLY);
    const settings = await ctx.agents.settingsFor(organizationId);
    return demoOnly === null ? settings : { ...settings, demoOnly };
  }

  api.get(
    '/api/setup',
    {
      schema: {
        summary: 'Whether first-run setup is needed',
        tags: ['dashboard'],
        response: { 200: SetupStatusSchema },
      },
    },
    async (request) => {
      const needed = (await ownAccountCount(repos)) === 0;
      const demo = (await repos.workspaces.findById(DEMO.organizationId)) !== null;
      const launchToken = await ctx.launch.holds(request);
      // The demo lives in a desktop's data directory; a team server has none to make it in.
      const demoAvailable = ctx.store !== null;
      const setupCode = ctx.launch.kind === 'code';
      if (!needed) return { needed, demo, demoAvailable, launchToken, setupCode };
      return { needed, demo, demoAvailable, launchToken, setupCode, agents: await setupAgents(ctx) };
    },
  );

  api.post(
    '/api/setup',
    {
      ...ctx.launch.required,
      schema: {
        summary: 'First-run setup',
        description:
          "Creates the owner account and a first workspace, and signs the owner in. Needs the launch token (403 without it: open the URL `serve` printed). Only while no account exists but the demo's (409 afterwards).",
        tags: ['dashboard'],
        body: SetupBodySchema,
        response: { 201: SetupResponseSchema, ...errorResponses(400, 403, 409, 413, 415, 500, 503) },
      },
    },
    async (request, reply) => {
      const { agent, acpAgent } = request.body;
      if (agent !== undefined) checkAgentChoice(ctx.agents, ctx.agentEnv, { agent, acpAgent });
      const result = await accounts.setUp(request.body);
      await startSignIn(ctx, reply, result.user.id);
      return reply.code(201).send(result);
    },
  );

  api.post(
    '/api/setup/demo',
    {
      ...ctx.launch.required,
      schema: {
        summary: 'First-run demo',
        description:
          "Instead of setup: creates the demo workspace (sample data) once and signs in as its owner. Needs the launch token (403 without it). Only while no account exists but the demo's (409 afterwards).",
        tags: ['dashboard'],
        response: { 201: SetupResponseSchema, ...errorResponses(403, 409, 500, 503) },
      },
    },
    async (_request, reply) => {
      if ((await ownAccountCount(repos)) > 0)
        throw conflict('Session Desk is already set up; sign in instead');
      const store = localStore(ctx, 'The demo workspace');
      await seedDemo({ store, storage: ctx.storage, accounts, clock: ctx.clock });
      const owner = await repos.users.findByEmail(DEMO.email);
      const workspace = (await repos.workspaces.listForUser(owner?.id ?? '')).find(
        (w) => w.organizationId === DEMO.organizationId,
      );
      if (!owner || !workspace) throw new Error('the demo workspace was not created');
      await startSignIn(ctx, reply, owner.id);
      return reply
        .code(201)
        .send({ user: { id: owner.id, email: owner.email, name: owner.name }, workspace });
    },
  );

  api.get(
    '/api/workspaces',
    {
      ...userOnly,
      schema: {
        summary: 'My workspaces',
        tags: ['dashboard'],
        response: { 200: WorkspacesResponseSchema, ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => ({ workspaces: await repos.workspaces.listForUser(userOf(request).userId) }),
  );

  api.post(
    '/api/workspaces',
    {
      ...userOnly,
      schema: {
        summary: 'Create a workspace',
        description: 'The signed-in user becomes its owner.',
        tags: ['dashboard'],
        body: NewWorkspaceBodySchema,
        response: { 201: WorkspaceResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
      },
    },
    async (request, reply) => {
      const user = await repos.users.findById(userOf(request).userId);
      if (!user) throw forbidden('Your account no longer exists');
      await refuseDemoAccount(user.id, 'stay in the demo workspace');
      const workspace = await accounts.createWorkspace({ name: request.body.name, ownerEmail: user.email });
      return reply.code(201).send({ workspace });
    },
  );

  api.get(
    '/api/workspaces/:organizationId/members',
    {
      ...userOnly,
      schema: {
        summary: 'Members of a workspace',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        response: { 200: MembersResponseSchema, ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      const { organizationId } = request.params;
      await ctx.access.requireRole(userOf(request).userId, organizationId, 'member');
      return {
        members: await accounts.listMembers(organizationId),
        invitations: await accounts.listInvitations(organizationId),
      };
    },
  );

  api.post(
    '/api/workspaces/:organizationId/members',
    {
      ...userOnly,
      schema: {
        summary: 'Add a member',
        description:
          'Owners only. Adds the user with that email (201); with `name` and `password`, creates that local user first. An email without an account is invited instead (202): it joins the workspace when it first signs in (through the identity provider, or once an account with that email is made).',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: NewMemberBodySchema,
        response: {
          201: MemberResponseSchema,
          202: InvitationResponseSchema,
          ...errorResponses(400, 401, 403, 404, 409, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { organizationId } = request.params;
      const { userId } = userOf(request);
      await ctx.access.requireRole(userId, organizationId, 'owner');
      const { email, name, password } = request.body;
      if (name !== undefined || password !== undefined) await refuseDemoAccount(userId, 'create no accounts');
      if (isDemoAccount(email) && organizationId !== DEMO.organizationId) {
        throw forbidden("The demo's accounts stay in the demo workspace");
      }
      if ((name === undefined) !== (password === undefined)) {
        throw badRequest('To create a new user, send both name and password', [
          { path: name === undefined ? 'body.name' : 'body.password', message: 'is required with the other' },
        ]);
      }
      if (name !== undefined && password !== undefined && !(await repos.users.findByEmail(email))) {
        const user = await accounts.createUser({ email, name, password });
        // Invited before: the new account took up its invitation, and is a member already.
        const joined = (await accounts.listMembers(organizationId)).find((m) => m.userId === user.id);
        if (joined) return reply.code(201).send({ member: joined });
      }
      const added = await accounts.addMemberOrInvite({ organizationId, email, invitedBy: userId });
      if ('invitation' in added) return reply.code(202).send(added);
      return reply.code(201).send(added);
    },
  );

  api.delete(
    '/api/workspaces/:organizationId/invitations/:email',
    {
      ...userOnly,
      schema: {
        summary: 'Withdraw an invitation',
        description: 'Owners only. The email no longer joins the workspace when it signs in.',
        tags: ['dashboard'],
        params: InvitationParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      await accounts.withdrawInvitation(request.params);
      return reply.code(204).send(null);
    },
  );

  api.delete(
    '/api/workspaces/:organizationId/members/:userId',
    {
      ...userOnly,
      schema: {
        summary: 'Remove a member',
        description: 'Owners only. The last owner cannot be removed (409).',
        tags: ['dashboard'],
        params: MemberParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 403, 404, 409, 500, 503) },
      },
    },
    async (request, reply) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      await accounts.removeMember(request.params);
      await ctx.credentialChanges.notify();
      return reply.code(204).send(null);
    },
  );

  api.get(
    '/api/workspaces/:organizationId/keys',
    {
      ...userOnly,
      schema: {
        summary: 'API keys of a workspace',
        description: 'Active keys, newest first: prefix, label, created and last used. Never the key itself.',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        response: { 200: KeysResponseSchema, ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'member');
      return { keys: await accounts.listKeys(request.params.organizationId) };
    },
  );

  api.post(
    '/api/workspaces/:organizationId/keys',
    {
      ...userOnly,
      schema: {
        summary: 'Create an API key',
        description:
          "The answer is the only time the whole key is shown. `canApprove: true` (owners only, 403 otherwise) lets the key decide agents' requests (`POST /api/approvals/{id}`); every key may list them. `pushOnly: true` makes a key that may only push a desktop's sessions (`sessiondesk push`).",
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: NewKeyBodySchema,
        response: { 201: CreatedKeyResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
      },
    },
    async (request, reply) => {
      const { userId } = userOf(request);
      const { canApprove, pushOnly } = request.body;
      await ctx.access.requireRole(
        userId,
        request.params.organizationId,
        canApprove === true ? 'owner' : 'member',
      );
      const key = await accounts.createKey({
        organizationId: request.params.organizationId,
        label: request.body.label,
        createdBy: userId,
        canApprove,
        pushOnly,
      });
      return reply.code(201).send({ key });
    },
  );

  api.delete(
    '/api/workspaces/:organizationId/keys/:keyId',
    {
      ...userOnly,
      schema: {
        summary: 'Revoke an API key',
        description:
          'An owner revokes any key of the workspace; a member only the keys they made (403 for any other). The key stops working at once, on every server process.',
        tags: ['dashboard'],
        params: KeyParamsSchema,
        response: { 204: z.null(), ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      const { userId } = userOf(request);
      const role = await ctx.access.requireRole(userId, request.params.organizationId, 'member');
      await accounts.revokeKey({
        organizationId: request.params.organizationId,
        keyId: request.params.keyId,
        ...(role === 'owner' ? {} : { onlyMadeBy: userId }),
      });
      await ctx.credentialChanges.notify();
      return reply.code(204).send(null);
    },
  );

  api.get(
    '/api/workspaces/:organizationId/agent',
    {
      ...userOnly,
      schema: {
        summary: "The workspace's agent",
        description:
          'Which agent runs new sessions and follow-ups, and where that comes from: the workspace, SESSIONDESK_AGENT_COMMAND, or the default (the demo agent).',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        response: { 200: AgentSettingsResponseSchema, ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      const { userId } = userOf(request);
      await ctx.access.requireRole(userId, request.params.organizationId, 'member');
      return agentSettingsAs(userId, request.params.organizationId);
    },
  );

  api.put(
    '/api/workspaces/:organizationId/agent',
    {
      ...userOnly,
      schema: {
        summary: "Set the workspace's agent",
        description:
          "Owners only. `demo`; `command` with the `commandName` of a command the administrator defined (`sessiondesk agent-command set`); `claude-code`, `codex` or `gemini`, whose program must be installed (400 otherwise); or `acp` with the `acpAgent` id of an agent that speaks the Agent Client Protocol (`GET /api/agents` lists them; unknown or not installed: 400). Sending a program (`command`) is refused with 403: choosing which programs run is the administrator's privilege. `allowedHosts` limits the network of the agents' programs to those hosts (an empty list is refused: leave it out for an open network); the answer's `networkEnforced` says whether this machine can enforce it. `approvals: \"ask\"` makes what agents ask before they act wait for a decision (`GET /api/approvals`), rejected after `approvalTimeoutSeconds` (default 1800); `auto` or absent allows every tool call inside the sandbox. `approvalRules` (at most 50, owners only, as the rest) decide requests before anyone is asked: the first whose `kind` and `pattern` match decides `allow`, `ask` or `reject`; what no rule matches, `approvals` decides (see the Approvals guide). Like every field, left out it is removed. Applies to runs started afterwards.",
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: AgentSettingsSchema,
        response: { 200: AgentSettingsResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
      },
    },
    async (request) => {
      const { organizationId } = request.params;
      const { userId } = userOf(request);
      await ctx.access.requireRole(userId, organizationId, 'owner');
      const { agent, acpAgent: acpAgentId, command, commandName, timeoutMs, allowedHosts } = request.body;
      const { approvals, approvalTimeoutSeconds, approvalRules } = request.body;
      if (agent !== 'demo') await refuseDemoAccount(userId, DEMO_AGENT_ONLY);
      if (command !== undefined) {
        throw forbidden(
          'Only the administrator of this installation chooses which programs run: they define agent ' +
            'commands with "sessiondesk agent-command set NAME -- program args…", and owners choose one ' +
            'by commandName.',
        );
      }
      if (agent === 'command') {
        if (commandName === undefined) {
          throw badRequest('The command agent needs one of the commands the administrator defined', [
            { path: 'body.commandName', message: 'is required for agent "command"' },
          ]);
        }
        if (!(commandName in ctx.agents.namedCommands())) {
          throw badRequest(`There is no agent command named "${commandName}"`, [
            { path: 'body.commandName', message: 'is not one of the commands the administrator defined' },
          ]);
        }
      } else if (commandName !== undefined) {
        throw badRequest('commandName goes with agent "command"', [
          { path: 'body.commandName', message: 'is only for agent "command"' },
        ]);
      }
      checkAgentChoice(ctx.agents, ctx.agentEnv, { agent, acpAgent: acpAgentId });
      await ctx.storage.write((tx) =>
        tx.workspaces.putSettings(organizationId, {
          agent,
          ...(agent === 'acp' && acpAgentId !== undefined ? { acpAgent: acpAgentId } : {}),
          ...(agent === 'command' && commandName !== undefined ? { commandName } : {}),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(allowedHosts === undefined ? {} : { allowedHosts: [...new Set(allowedHosts)] }),
          ...(approvals === undefined ? {} : { approvals }),
          ...(approvalTimeoutSeconds === undefined ? {} : { approvalTimeoutSeconds }),
          ...(approvalRules === undefined || approvalRules.length === 0 ? {} : { approvalRules }),
        }),
      );
      return agentSettingsAs(userId, organizationId);
    },
  );

  api.post(
    '/api/workspaces/:organizationId/agent/check',
    {
      // It starts the agent's program: an owner's to ask, as choosing the agent is; never a key's.
      ...userOnlyKeysForbidden,
      schema: {
        summary: "Check the workspace's agent",
        description: `Owners only, signed in (an API key: 403). Runs the workspace's agent as a session would, within ${AGENT_CHECK_DEADLINE_MS / 1000} s: \`program\` (found, its version asked in the sandbox), \`credentials\` (the sign-in a session's home gets), \`prompt\` (one prompt, "${AGENT_CHECK_PROMPT}", in a sandbox of its own through the workspace's network allow-list). A failed step names the model API it tried (\`endpoint\`) and what to do (\`fix\`). The demo agent's one step, \`simulated\`, passes. Nothing is kept: no session records it.`,
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        response: { 200: AgentCheckSchema, ...errorResponses(400, 401, 403, 429, 500) },
      },
    },
    async (request) => {
      await ctx.access.requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      return ctx.agents.checkAgent(request.params.organizationId);
    },
  );
}

/**
 * The agents setup offers, as Settings describes them, without where their programs are: the
 * three agent CLIs (those not installed with their install command), every ACP agent installed,
 * and the demo agent.
 */
async function setupAgents(ctx: AppContext): Promise<SetupAgent[]> {
  const kinds = await ctx.agents.describeAgents(ctx.agentEnv);
  return SETUP_AGENTS.flatMap((kind) =>
    kinds
      .filter((info) => info.kind === kind && (kind !== 'acp' || info.found))
      .map(({ acpAgent, name, simulated, found, version, install }) => ({
        kind,
        ...(acpAgent === undefined ? {} : { acpAgent }),
        name,
        simulated,
        found,
        ...(version === undefined ? {} : { version }),
        ...(!found && install !== undefined ? { install } : {}),
      })),
  );
}
