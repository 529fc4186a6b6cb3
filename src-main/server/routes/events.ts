import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import type { BusEvent } from '../../events/event-bus.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** A client that has this much unsent is too slow: it is disconnected and can resume. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;
const MAX_STREAMS = 200;

const EventsQuerySchema = OrgQuerySchema.extend({
  lastEventId: z
    .string()
    .max(100)
    .optional()
    .describe('Resume after this event (the Last-Event-ID header also works).'),
});

const streamDescription =
  'Server-sent events (`text/event-stream`): `session.created`, `session.updated`, `message.added`, `tasks.changed`, each with an `id`. Reconnect with `Last-Event-ID` to receive what was missed; when that is no longer possible, a `reset` event says to fetch afresh.';

/**
 * Live updates as server-sent events, authenticated like the other reads. Each stream is
 * bounded (a slow client is dropped and resumes with Last-Event-ID) and ended on shutdown.
 */
export function eventRoutes(app: FastifyInstance, ctx: AppContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either } = authHooks(ctx.auth);
  const open = new Set<() => void>();

  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  function stream(
    request: FastifyRequest,
    reply: FastifyReply,
    matches: (e: BusEvent) => boolean,
    lastEventId: string | undefined,
  ) {
    if (open.size >= MAX_STREAMS) {
      return reply.code(503).send({ error: { code: 'unavailable', message: 'Too many open event streams' } });
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    // A HEAD answer has no body: held open, it would never reach the client (nor free its slot).
    if (request.method === 'HEAD') {
      raw.end();
      return reply;
    }
    let ended = false;
    const write = (text: string) => {
      if (ended) return;
      raw.write(text);
      if (raw.writableLength > MAX_BUFFERED_BYTES) end();
    };
    const send = (entry: BusEvent) =>
      write(`id: ${entry.id}\nevent: ${entry.event.type}\ndata: ${JSON.stringify(entry.event)}\n\n`);
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      clearInterval(heartbeat);
      open.delete(end);
      raw.end();
    };
    write('retry: 2000\n\n');
    if (lastEventId) {
      const missed = ctx.events.since(lastEventId);
      if (missed === null) {
        write(
          `event: reset\ndata: ${JSON.stringify({ type: 'reset', reason: 'Some events can no longer be replayed; fetch afresh.' })}\n\n`,
        );
      } else {
        for (const entry of missed) if (matches(entry)) send(entry);
      }
    }
    const unsubscribe = ctx.events.subscribe((entry) => {
      if (matches(entry)) send(entry);
    });
    const heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
    open.add(end);
    request.raw.on('close', end);
    return reply;
  }

  const lastId = (request: FastifyRequest, query: string | undefined) => {
    const header = request.headers['last-event-id'];
    return typeof header === 'string' && header !== '' ? header : query;
  };

  api.get(
    '/api/events',
    {
      ...either,
      schema: {
        summary: 'Live events of a workspace',
        description: streamDescription,
        tags: ['events'],
        querystring: EventsQuerySchema,
        response: {
          200: z.string().describe('text/event-stream'),
          ...errorResponses(400, 401, 403, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const workspaceId = ctx.access.workspaceFor(principalOf(request), request.query.organizationId);
      return stream(
        request,
        reply,
        (e) => e.workspaceId === workspaceId,
        lastId(request, request.query.lastEventId),
      );
    },
  );

  api.get(
    '/api/sessions/:sessionId/events',
    {
      ...either,
      schema: {
        summary: 'Live events of a session',
        description: streamDescription,
        tags: ['events'],
        params: SessionParamsSchema,
        querystring: EventsQuerySchema,
        response: {
          200: z.string().describe('text/event-stream'),
          ...errorResponses(401, 403, 404, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const row = ctx.access.session(
        principal,
        request.params.sessionId,
        request.query.organizationId,
        (id) => ctx.repos.sessions.find(id),
      );
      return stream(
        request,
        reply,
        (e) => e.sessionId === row.id,
        lastId(request, request.query.lastEventId),
      );
    },
  );
}
