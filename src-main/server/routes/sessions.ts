import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CreateSessionBodySchema,
  FullSessionResponseSchema,
  ListSessionsQuerySchema,
  ListSessionsResponseSchema,
  OrgQuerySchema,
  SessionParamsSchema,
  SessionResponseSchema,
  UpdateSessionBodySchema,
  FollowUpBodySchema,
  MESSAGES_PAGE_DEFAULT,
  MessagesPageQuerySchema,
  MessagesPageResponseSchema,
  RepositoriesResponseSchema,
  type SessionSummary,
  type Stats,
} from '../../../src-shared/sessions.js';
import { WorkspaceParamsSchema } from '../../../src-shared/accounts.js';
import { badRequest, notFound } from '../../errors.js';
import type { SessionRow } from '../../store/session-row.js';
import { principalOf, userOf, type AppContext } from '../context.js';
import { authHooks, type Principal } from '../auth/authenticate.js';
import { messagesJson, readMessagePage, settledRow } from '../../sessions/transcript-reads.js';
import { checkedSummary } from '../../sessions/checked-summary.js';
import { toSummary } from '../../sessions/summary.js';
import { fullSessionFrame } from '../serialize.js';
import { errorResponses } from './error-responses.js';

const CursorSchema = z.tuple([z.string(), z.string()]);

function encodeCursor(row: SessionRow): string {
  return Buffer.from(JSON.stringify([row.createdAt, row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = CursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAt, id };
  } catch {
    throw badRequest('The cursor is invalid', [
      { path: 'query.cursor', message: 'is not a cursor from nextCursor' },
    ]);
  }
}

/**
 * Sessions whose transcript is at most this many bytes are answered from one buffer (and
 * cached); larger ones are streamed from their file as they are read.
 */
const BUFFERED_TRANSCRIPT_MAX = 4 * 1024 * 1024;
/** A page of messages stops once it holds about this many bytes. */
const MESSAGES_PAGE_BYTES = 4 * 1024 * 1024;

/** Sends JSON text that was built to match the route's response schema. */
function sendJsonText(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

export function sessionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { auth, clock, caches } = ctx;
  const { repos } = ctx.storage;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { either, userOnly } = authHooks(auth);

  /** The workspace a request acts in, after the authorization rules of the spec. */
  const workspaceFor = (principal: Principal, organizationId: string | undefined): Promise<string> =>
    ctx.access.workspaceFor(principal, organizationId);

  /** Finds a session the caller may see: 404 when there is none, 403 when it is elsewhere. */
  function accessible<T extends { workspaceId: string }>(
    principal: Principal,
    sessionId: string,
    organizationId: string | undefined,
    lookup: (sessionId: string) => T | null | undefined | Promise<T | null | undefined>,
  ): Promise<T> {
    return ctx.access.session(principal, sessionId, organizationId, lookup);
  }

  const accessibleSession = (principal: Principal, sessionId: string, organizationId: string | undefined) =>
    accessible(principal, sessionId, organizationId, (id) => repos.sessions.find(id));

  /**
   * The full form: from the cache; or read from the transcript into one buffer (cached)
   * when small; or streamed from it. The row is taken once the transcript holds every byte
   * it counts, and the transcript is read only up to that length.
   */
  async function sendFullSession(reply: FastifyReply, sessionId: string): Promise<FastifyReply> {
    const read = caches.sessions.begin(sessionId);
    try {
      const settled = await settledRow(ctx, sessionId, (_row, read) => read.sessions.tasks(sessionId));
      if (!settled) throw notFound('Session not found');
      const { row } = settled;
      const { head, tail } = fullSessionFrame(row, settled.also);
      if (row.transcriptBytes > BUFFERED_TRANSCRIPT_MAX) {
        read.done();
        const parts = async function* () {
          yield Buffer.from(head);
          yield* messagesJson(ctx, row);
          yield Buffer.from(tail);
        };
        return reply.type('application/json; charset=utf-8').send(Readable.from(parts()));
      }
      const pieces: Buffer[] = [Buffer.from(head)];
      for await (const piece of messagesJson(ctx, row)) pieces.push(piece);
      pieces.push(Buffer.from(tail));
      // Not Buffer.concat's pooled result: a small one would be a slice of an 8 KiB pool,
      // all of which the cache would keep alive.
      const body = Buffer.allocUnsafeSlow(pieces.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const piece of pieces) at += piece.copy(body, at);
      read.keep(row.workspaceId, body);
      return sendJsonText(reply, body);
    } finally {
      read.done();
    }
  }

  api.get(
    '/api/sessions',
    {
      ...either,
      schema: {
        summary: 'List sessions',
        description:
          'Sessions of a workspace, newest first, with its stats. Without `limit`, all of them; with it, one page and `nextCursor` when more follow. The filters (`status`, `repository`, `authorId`, `q`, `agent`, `source`) combine: a session must match each one given.',
        tags: ['sessions'],
        querystring: ListSessionsQuerySchema,
        response: { 200: ListSessionsResponseSchema, ...errorResponses(400, 401, 403, 429, 500) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { organizationId, limit, cursor, status, repository, authorId, q, agent, source } = request.query;
      const filters = { status, repository, authorId, q, agent, source };
      const workspaceId = await workspaceFor(principal, organizationId);
      const key = JSON.stringify([
        workspaceId,
        limit,
        cursor,
        status,
        repository,
        authorId,
        q,
        agent,
        source,
      ]);
      let page = caches.lists.get(key)?.value;
      if (!page) {
        const after = cursor === undefined ? undefined : decodeCursor(cursor);
        // Kept only if no session changed while the page was read.
        const read = caches.lists.begin(key);
        try {
          const rows = await repos.sessions.list(workspaceId, filters, {
            ...(limit === undefined ? {} : { limit: limit + 1 }),
            ...(after ? { after } : {}),
          });
          const more = limit !== undefined && rows.length > limit;
          if (more) rows.length = limit;
          // One row out of the schema's form never takes the whole list down (checked-summary.ts).
          const sessions: SessionSummary[] = rows.flatMap(
            (row) => checkedSummary(row, 'both', ctx.logger) ?? [],
          );
          page = { sessions: JSON.stringify(sessions) };
          if (more) page.nextCursor = encodeCursor(rows[rows.length - 1] as SessionRow);
          // Counted with the page, and dropped with it by any change to a session.
          if (limit !== undefined) page.total = await repos.sessions.count(workspaceId, filters);
          read.keep(workspaceId, page);
        } finally {
          read.done();
        }
      }
      // The stats move with the clock, so they are never cached.
      const stats: Stats = await repos.sessions.stats(workspaceId, clock.now());
      const cursorJson =
        (page.nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(page.nextCursor)}`) +
        (page.total === undefined ? '' : `,"total":${page.total}`);
      // Built from typed rows; skipping re-validation keeps a 10,000-session list fast.
      return sendJsonText(
        reply,
        `{"sessions":${page.sessions},"stats":${JSON.stringify(stats)}${cursorJson}}`,
      );
    },
  );

  api.get(
    '/api/sessions/:sessionId',
    {
      ...either,
      schema: {
        summary: 'Get a session',
        description: 'One session in full form, with its messages in conversation order and its tasks.',
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: { 200: FullSessionResponseSchema, ...errorResponses(401, 403, 404, 429, 500) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { sessionId } = request.params;
      // Only well-formed ids of existing sessions are ever cached; access is checked either way.
      const cached = caches.sessions.get(sessionId);
      if (cached) {
        await accessible(principal, sessionId, request.query.organizationId, () => cached);
        return sendJsonText(reply, cached.value);
      }
      await accessibleSession(principal, sessionId, request.query.organizationId);
      return sendFullSession(reply, sessionId);
    },
  );

  api.get(
    '/api/sessions/:sessionId/messages',
    {
      ...either,
      schema: {
        summary: "A page of a session's messages",
        description:
          'Messages in conversation order, after the first `after`, at most `limit` of them (and about 4 MiB, but always at least one): for reading a long transcript piece by piece. `total` is the number of messages now; `nextAfter` is present while more follow.',
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: MessagesPageQuerySchema,
        response: { 200: MessagesPageResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { sessionId } = request.params;
      const { organizationId, after = 0, limit = MESSAGES_PAGE_DEFAULT } = request.query;
      await accessibleSession(principal, sessionId, organizationId);
      const row = await settledRow(ctx, sessionId);
      if (!row) throw notFound('Session not found');
      const page = await readMessagePage(ctx, row, after, limit, MESSAGES_PAGE_BYTES);
      const pieces: Buffer[] = [Buffer.from('{"messages":[')];
      page.messages.forEach((message, i) => {
        if (i > 0) pieces.push(Buffer.from(','));
        pieces.push(message);
      });
      const more = page.next < row.messageCount ? `,"nextAfter":${page.next}` : '';
      pieces.push(Buffer.from(`],"total":${row.messageCount}${more}}`));
      return sendJsonText(reply, Buffer.concat(pieces));
    },
  );

  api.patch(
    '/api/sessions/:sessionId',
    {
      ...either,
      schema: {
        summary: 'Update a session',
        description:
          'Changes the title and/or status; only the fields sent change. Answers with the summary form, without previews.',
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        body: UpdateSessionBodySchema,
        response: {
          200: SessionResponseSchema,
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const row = await accessibleSession(
        principalOf(request),
        request.params.sessionId,
        request.query.organizationId,
      );
      return { session: toSummary(await ctx.sessionCommands.update(row, request.body), 'none') };
    },
  );

  api.post(
    '/api/sessions',
    {
      ...userOnly,
      schema: {
        summary: 'Create a session',
        description:
          'Signed-in users only (the `__session` cookie); an API key is answered with 400. The title comes from the initial message.',
        tags: ['sessions'],
        body: CreateSessionBodySchema,
        response: { 201: SessionResponseSchema, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const principal = userOf(request);
      const workspaceId = await workspaceFor(principal, request.body.organizationId);
      const created = await ctx.sessionCommands.create(principal.userId, workspaceId, request.body);
      // Queued when the limit of runs at once is reached.
      return reply.code(201).send({ session: toSummary(created, 'first') });
    },
  );

  api.post(
    '/api/sessions/:sessionId/messages',
    {
      ...userOnly,
      schema: {
        summary: 'Send a follow-up',
        description:
          "Signed-in users only, like create. Appends the prompt and passes it to the agent; a finished session becomes active again. A session imported from an agent CLI's files needs `continueIn` (409 without it): its CLI resumes the conversation in its own folder or in a fresh clone. Answers with the summary form.",
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        body: FollowUpBodySchema,
        response: {
          201: SessionResponseSchema,
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = userOf(request);
      const row = await accessibleSession(principal, request.params.sessionId, request.query.organizationId);
      const updated = await ctx.sessionCommands.followUp(row, request.body, principal.userId);
      return reply.code(201).send({ session: toSummary(updated, 'both') });
    },
  );

  api.post(
    '/api/sessions/:sessionId/stop',
    {
      ...either,
      schema: {
        summary: 'Stop a session',
        description:
          "Stops the agent working on an active session (key or cookie, like update). The session becomes `completed` with a result message marked `stopped: true` saying who stopped it. A session that is not active: 409. An imported session with no run of Session Desk's going (its CLI goes on in the person's terminal, which a stop here cannot reach): 409, saying to mark it finished with an update of its status instead. Answers with the summary form.",
        tags: ['sessions'],
        params: SessionParamsSchema,
        querystring: OrgQuerySchema,
        response: {
          200: SessionResponseSchema,
          ...errorResponses(401, 403, 404, 409, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await accessibleSession(principal, request.params.sessionId, request.query.organizationId);
      const stopped = await ctx.sessionCommands.stop(row, principal);
      return { session: toSummary(stopped, 'both') };
    },
  );

  api.get(
    '/api/workspaces/:organizationId/repositories',
    {
      ...either,
      schema: {
        summary: "The workspace's repositories",
        description:
          'The distinct `<owner>/<repo>` of the sessions of a workspace, for the repository filter. Key or cookie.',
        tags: ['sessions'],
        params: WorkspaceParamsSchema,
        response: { 200: RepositoriesResponseSchema, ...errorResponses(401, 403, 429, 500) },
      },
    },
    async (request) => {
      const workspaceId = await workspaceFor(principalOf(request), request.params.organizationId);
      return { repositories: await repos.sessions.repositories(workspaceId) };
    },
  );
}
