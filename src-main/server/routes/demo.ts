import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { SignInResponseSchema } from '../../../src-shared/accounts.js';
import { DEMO } from '../../demo/people.js';
import { notFound } from '../../errors.js';
import type { AppContext } from '../context.js';
import { publicUser, startSignIn } from './auth.js';
import { errorResponses } from './error-responses.js';

/**
 * The demo's sign-in for whoever started the server: the launch token stands in for the
 * demo owner's password, which is never served. Any other data directory answers 404.
 */
export function demoRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/demo/sign-in',
    {
      ...ctx.launch.required,
      schema: {
        summary: 'Sign in to the demo',
        description:
          'Signs in as the demo workspace owner. Needs the launch token (403 without it: open the URL `serve` printed); only on a data directory with the demo workspace (404 otherwise).',
        tags: ['dashboard'],
        response: { 200: SignInResponseSchema, ...errorResponses(403, 404, 500, 503) },
      },
    },
    async (_request, reply) => {
      const owner = (await ctx.storage.repos.workspaces.findById(DEMO.organizationId))
        ? await ctx.storage.repos.users.findByEmail(DEMO.email)
        : null;
      if (!owner) throw notFound('This data directory has no demo workspace');
      await startSignIn(ctx, reply, owner.id);
      return { user: publicUser(owner) };
    },
  );
}
