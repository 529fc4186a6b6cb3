import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OrgQuerySchema, SessionParamsSchema } from '../../../src-shared/sessions.js';
import type { KeptEvent } from '../../events/event-bus.js';
import { AppError } from '../../errors.js';
import { authHooks, type Principal } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/** A client that has this much unsent is too slow: it is disconnected and can resume. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;
/** Streams open at once: in all, per workspace, and per key or sign-in, so none can take every slot. */
export const STREAM_LIMITS = { total: 1000, perWorkspace: 50, perPrincipal: 20 } as const;
/** A stream's credential is checked again this often (besides at once when one is ended anywhere). */
const RECHECK_MS = 5_000;
const DEFAULT_MAX_LIFETIME_MS = 60 * 60 * 1000;

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
  const maxLifetimeMs = ctx.config.eventStreamMaxMs ?? DEFAULT_MAX_LIFETIME_MS;
  interface OpenStream {
    principalKey: string;
    workspaceId: string;
    /** Ends the stream when its credential or access is gone. */
    recheck(): void;
    end(): void;
  }
  const open = new Set<OpenStream>();
  const recheckAll = () => {
    for (const entry of [...open]) entry.recheck();
  };
  const unsubscribeChanges = ctx.credentialChanges.subscribe(recheckAll);
  const recheckTimer = setInterval(recheckAll, RECHECK_MS);
  recheckTimer.unref();

  app.addHook('preClose', async () => {
    unsubscribeChanges();
    clearInterval(recheckTimer);
    for (const entry of [...open]) entry.end();
  });

  const keyOf = (principal: Principal) =>
    principal.kind === 'apiKey' ? `key:${principal.keyId}` : `user:${principal.userId}`;

  function refuseIfFull(principal: Principal, workspaceId: string): void {
    const count = (test: (entry: OpenStream) => boolean) => [...open].filter(test).length;
    const full = (message: string) =>
      new AppError(429, 'rate_limited', message, undefined, { 'retry-after': '30' });
    if (open.size >= STREAM_LIMITS.total) {
      throw new AppError(503, 'unavailable', 'Too many open event streams');
    }
    if (count((e) => e.principalKey === keyOf(principal)) >= STREAM_LIMITS.perPrincipal) {
      throw full(
        `This ${principal.kind === 'apiKey' ? 'API key' : 'sign-in'} has too many open event streams`,
      );
    }
    if (count((e) => e.workspaceId === workspaceId) >= STREAM_LIMITS.perWorkspace) {
      throw full('This workspace has too many open event streams');
    }
  }

  function stream(
    request: FastifyRequest,
    reply: FastifyReply,
    workspaceId: string,
    matches: (e: KeptEvent) => boolean,
    lastEventId: string | undefined,
  ) {
    const principal = principalOf(request);
    refuseIfFull(principal, workspaceId);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // nginx would hold the stream in its buffers unless its configuration says otherwise.
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    // A HEAD answer has no body: held open, it would never reach the client (nor free its slot).
    if (request.method === 'HEAD') {
      raw.end();
      return reply;
    }
    let ended = false;
    // Set up below; `end` may run first (a client too slow for what it missed).
    let unsubscribe = () => {};
    const timers: { heartbeat?: NodeJS.Timeout; lifetime?: NodeJS.Timeout } = {};
    const write = (text: string) => {
      if (ended) return;
      raw.write(text);
      if (raw.writableLength > MAX_BUFFERED_BYTES) end();
    };
    const send = (entry: KeptEvent) =>
      write(`id: ${entry.id}\nevent: ${entry.type}\ndata: ${entry.data}\n\n`);
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      clearInterval(timers.heartbeat);
      clearTimeout(timers.lifetime);
      open.delete(entry);
      raw.end();
    };
    const stillGood = async () =>
      (await ctx.auth.stillValid(principal)) && (await ctx.access.stillAllowed(principal, workspaceId));
    /**
     * Set while the credential is being checked again. Events that arrive meanwhile wait in
     * `held`: nothing reaches a credential that was ended, even before its check answers. A
     * change of credentials in any process starts a check at once (on a team server it is
     * relayed before any later event); one asked for during a check is made after it, since
     * the check going on may have read the credential before the change.
     */
    let checking: Promise<void> | null = null;
    let checkAgain = false;
    const held: KeptEvent[] = [];
    const recheck = (): void => {
      if (checking) {
        checkAgain = true;
        return;
      }
      checking = stillGood()
        // A check that cannot be made (the database away) ends the stream too: the
        // client comes back, and is checked afresh.
        .catch(() => false)
        .then((good) => {
          checking = null;
          if (!good) return end();
          if (checkAgain) {
            checkAgain = false;
            return recheck();
          }
          for (const event of held.splice(0)) send(event);
        });
    };
    const entry: OpenStream = { principalKey: keyOf(principal), workspaceId, end, recheck };
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
    if (ended) return reply;
    unsubscribe = ctx.events.subscribe((event) => {
      if (!matches(event)) return;
      if (checking) held.push(event);
      else send(event);
    });
    timers.heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
    // Even a good credential reconnects now and then (with Last-Event-ID, losing nothing).
    timers.lifetime = setTimeout(end, maxLifetimeMs);
    open.add(entry);
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
      const workspaceId = await ctx.access.workspaceFor(principalOf(request), request.query.organizationId);
      return stream(
        request,
        reply,
        workspaceId,
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
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const row = await ctx.access.session(
        principal,
        request.params.sessionId,
        request.query.organizationId,
        (id) => ctx.storage.repos.sessions.find(id),
      );
      return stream(
        request,
        reply,
        row.workspaceId,
        (e) => e.sessionId === row.id,
        lastId(request, request.query.lastEventId),
      );
    },
  );
}
