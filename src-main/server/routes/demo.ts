import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { DemoSignInSchema } from '../../../src-shared/accounts.js';
import { DEMO } from '../../demo/seed.js';
import { readDemoSignIn } from '../../demo/sign-in.js';
import { notFound } from '../../errors.js';
import type { AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/**
 * The demo owner's random password, for the sign-in page of a demo data directory (it holds
 * sample data only). Any other data directory answers 404: there is nothing to show.
 */
export function demoRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/demo/sign-in',
    {
      schema: {
        summary: 'The demo sign-in',
        description:
          "The demo workspace owner's email and random password, made when the demo was created. Only on a data directory with the demo workspace (404 otherwise).",
        tags: ['dashboard'],
        response: { 200: DemoSignInSchema, ...errorResponses(404, 500) },
      },
    },
    async () => {
      const signIn = ctx.repos.workspaces.findById(DEMO.organizationId)
        ? readDemoSignIn(ctx.store.dataDir)
        : null;
      if (!signIn) throw notFound('This data directory has no demo workspace');
      return signIn;
    },
  );
}
