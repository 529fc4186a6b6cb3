import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  AddMemberBodySchema,
  CreateKeyBodySchema,
  CreateUserBodySchema,
  CreateWorkspaceBodySchema,
  ListKeysQuerySchema,
  RevokeKeyBodySchema,
} from '../../../src-shared/accounts.js';
import { hashSecret } from '../../accounts/secrets.js';
import { unauthorized } from '../../errors.js';
import type { AppContext } from '../context.js';

export const ADMIN_TOKEN_HEADER = 'x-sessiondesk-admin-token';

/**
 * What the `sessiondesk` CLI does when a server already holds the data directory: the
 * same account operations, over loopback, authenticated by the token the server wrote to
 * a file only this user can read. Not part of the public API.
 */
export function adminRoutes(app: FastifyInstance, ctx: AppContext, adminToken: string): void {
  const expected = Buffer.from(hashSecret(adminToken), 'hex');
  const api = app.withTypeProvider<ZodTypeProvider>();
  const onRequest = async (request: FastifyRequest) => {
    const given = request.headers[ADMIN_TOKEN_HEADER];
    const actual = Buffer.from(hashSecret(typeof given === 'string' ? given : ''), 'hex');
    if (!timingSafeEqual(actual, expected)) throw unauthorized('Invalid admin token');
  };
  const schema = { hide: true } as const;
  const { accounts } = ctx;

  api.post(
    '/api/admin/users',
    { onRequest, schema: { ...schema, body: CreateUserBodySchema } },
    async (request) => ({
      user: await accounts.createUser(request.body),
    }),
  );
  api.post(
    '/api/admin/workspaces',
    { onRequest, schema: { ...schema, body: CreateWorkspaceBodySchema } },
    async (request) => ({ workspace: await accounts.createWorkspace(request.body) }),
  );
  api.post(
    '/api/admin/members',
    { onRequest, schema: { ...schema, body: AddMemberBodySchema } },
    async (request) => ({
      member: await accounts.addMember(request.body),
    }),
  );
  api.post(
    '/api/admin/keys',
    { onRequest, schema: { ...schema, body: CreateKeyBodySchema } },
    async (request) => ({
      key: await accounts.createKey(request.body),
    }),
  );
  api.get(
    '/api/admin/keys',
    { onRequest, schema: { ...schema, querystring: ListKeysQuerySchema } },
    async (request) => ({
      keys: accounts.listKeys(request.query.organizationId),
    }),
  );
  api.post(
    '/api/admin/keys/revoke',
    { onRequest, schema: { ...schema, body: RevokeKeyBodySchema } },
    async (request, reply) => {
      await accounts.revokeKey(request.body);
      return reply.code(204).send();
    },
  );
}
