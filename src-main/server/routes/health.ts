import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HEALTH_PATH } from '../auth/localhost-guard.js';
import type { AppContext } from '../context.js';

const HealthSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  message: z.string().optional(),
});

/**
 * What a load balancer polls: 200 while this process serves and its database answers, 503
 * otherwise (as it is while the process starts and stops). It says nothing else, needs no
 * credentials, and is the one route the Host check lets through (server/auth/localhost-guard.ts):
 * a balancer polls each upstream by its own address.
 */
export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get(
    HEALTH_PATH,
    {
      schema: {
        summary: 'Health',
        description:
          '200 `{ status: "ok" }` while this server process answers and its database does; 503 `{ status: "unavailable" }` otherwise. No credentials; for load balancers\' health checks.',
        tags: ['server'],
        response: { 200: HealthSchema, 503: HealthSchema },
      },
    },
    async (_request, reply) => {
      try {
        await ctx.storage.repos.users.count();
        return { status: 'ok' as const };
      } catch {
        return reply
          .code(503)
          .header('retry-after', '1')
          .send({
            status: 'unavailable' as const,
            message: 'The database does not answer.',
          });
      }
    },
  );
}
