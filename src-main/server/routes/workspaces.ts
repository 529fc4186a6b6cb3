import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CreatedKeyResponseSchema,
  KeyParamsSchema,
  KeysResponseSchema,
  MemberParamsSchema,
  MemberResponseSchema,
  MembersResponseSchema,
  NewKeyBodySchema,
  NewMemberBodySchema,
  NewWorkspaceBodySchema,
  SetupBodySchema,
  SetupResponseSchema,
  SetupStatusSchema,
  WorkspaceParamsSchema,
  WorkspaceResponseSchema,
  WorkspacesResponseSchema,
} from '../../../src-shared/accounts.js';
import { ErrorResponseSchema } from '../../../src-shared/errors.js';
import { badRequest, forbidden } from '../../errors.js';
import { authHooks } from '../auth/authenticate.js';
import { userOf, type AppContext } from '../context.js';
import { startSignIn } from './auth.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorResponseSchema]));

/**
 * The dashboard's own endpoints: first-run setup, workspaces, members and API keys. All but
 * setup need the sign-in cookie; an API key is refused (400), so a leaked key can never
 * mint more keys or change who is in a workspace.
 */
export function workspaceRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { accounts, repos } = ctx;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { userOnly } = authHooks(ctx.auth);

  function requireRole(userId: string, organizationId: string, needed: 'member' | 'owner'): void {
    const role = repos.workspaces.role(organizationId, userId);
    if (role === null) throw forbidden();
    if (needed === 'owner' && role !== 'owner')
      throw forbidden('Only an owner of this workspace can do that');
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
    async () => ({ needed: repos.users.count() === 0 }),
  );

  api.post(
    '/api/setup',
    {
      schema: {
        summary: 'First-run setup',
        description:
          'Creates the owner account and a first workspace, and signs the owner in. Only while no user exists (409 afterwards).',
        tags: ['dashboard'],
        body: SetupBodySchema,
        response: { 201: SetupResponseSchema, ...errors(400, 403, 409, 413, 415, 500, 503) },
      },
    },
    async (request, reply) => {
      const result = await accounts.setUp(request.body);
      await startSignIn(ctx, reply, result.user.id);
      return reply.code(201).send(result);
    },
  );

  api.get(
    '/api/workspaces',
    {
      ...userOnly,
      schema: {
        summary: 'My workspaces',
        tags: ['dashboard'],
        response: { 200: WorkspacesResponseSchema, ...errors(400, 401, 500) },
      },
    },
    async (request) => ({ workspaces: repos.workspaces.listForUser(userOf(request).userId) }),
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
        response: { 201: WorkspaceResponseSchema, ...errors(400, 401, 403, 500, 503) },
      },
    },
    async (request, reply) => {
      const user = repos.users.findById(userOf(request).userId);
      if (!user) throw forbidden('Your account no longer exists');
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
        response: { 200: MembersResponseSchema, ...errors(400, 401, 403, 500) },
      },
    },
    async (request) => {
      requireRole(userOf(request).userId, request.params.organizationId, 'member');
      return { members: accounts.listMembers(request.params.organizationId) };
    },
  );

  api.post(
    '/api/workspaces/:organizationId/members',
    {
      ...userOnly,
      schema: {
        summary: 'Add a member',
        description:
          'Owners only. Adds the user with that email; with `name` and `password`, creates that local user first.',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: NewMemberBodySchema,
        response: { 201: MemberResponseSchema, ...errors(400, 401, 403, 404, 409, 500, 503) },
      },
    },
    async (request, reply) => {
      const { organizationId } = request.params;
      requireRole(userOf(request).userId, organizationId, 'owner');
      const { email, name, password } = request.body;
      if ((name === undefined) !== (password === undefined)) {
        throw badRequest('To create a new user, send both name and password', [
          { path: name === undefined ? 'body.name' : 'body.password', message: 'is required with the other' },
        ]);
      }
      if (name !== undefined && password !== undefined && !repos.users.findByEmail(email)) {
        await accounts.createUser({ email, name, password });
      }
      const member = await accounts.addMember({ organizationId, email });
      return reply.code(201).send({ member });
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
        response: { 204: z.null(), ...errors(400, 401, 403, 404, 409, 500, 503) },
      },
    },
    async (request, reply) => {
      requireRole(userOf(request).userId, request.params.organizationId, 'owner');
      await accounts.removeMember(request.params);
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
        response: { 200: KeysResponseSchema, ...errors(400, 401, 403, 500) },
      },
    },
    async (request) => {
      requireRole(userOf(request).userId, request.params.organizationId, 'member');
      return { keys: accounts.listKeys(request.params.organizationId) };
    },
  );

  api.post(
    '/api/workspaces/:organizationId/keys',
    {
      ...userOnly,
      schema: {
        summary: 'Create an API key',
        description: 'The answer is the only time the whole key is shown.',
        tags: ['dashboard'],
        params: WorkspaceParamsSchema,
        body: NewKeyBodySchema,
        response: { 201: CreatedKeyResponseSchema, ...errors(400, 401, 403, 500, 503) },
      },
    },
    async (request, reply) => {
      const { userId } = userOf(request);
      requireRole(userId, request.params.organizationId, 'member');
      const key = await accounts.createKey({
        organizationId: request.params.organizationId,
        label: request.body.label,
        createdBy: userId,
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
        tags: ['dashboard'],
        params: KeyParamsSchema,
        response: { 204: z.null(), ...errors(400, 401, 403, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      requireRole(userOf(request).userId, request.params.organizationId, 'member');
      await accounts.revokeKey({
        organizationId: request.params.organizationId,
        keyId: request.params.keyId,
      });
      return reply.code(204).send(null);
    },
  );
}
