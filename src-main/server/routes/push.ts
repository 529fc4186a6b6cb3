import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  PUSH_BODY_LIMIT,
  PUSH_SESSIONS_PATH,
  PushAnswerSchema,
  PushedStateSchema,
  PushParamsSchema,
  PushPartSchema,
} from '../../data/push-format.js';
import { pushedState, receivePushPart, type Pusher, type PushTarget } from '../../data/push-receive.js';
import { notFound } from '../../errors.js';
import { toSummary } from '../../sessions/summary.js';
import { authHooks } from '../auth/authenticate.js';
import { principalOf, type AppContext } from '../context.js';
import { errorResponses } from './error-responses.js';

/**
 * A desktop's sessions pushed to a team server (`sessiondesk push`): how far the server holds
 * one, and the rest of it, a part at a time. An API key only, of the workspace it pushes to; a
 * key made with `pushOnly` may call these routes and nothing else.
 */
export function pushRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { pushKey } = authHooks(ctx.auth);
  const target: PushTarget = { storage: ctx.storage, clock: ctx.clock };
  const api = app.withTypeProvider<ZodTypeProvider>();

  const pusherOf = async (request: FastifyRequest): Promise<Pusher> => {
    const principal = principalOf(request);
    if (principal.kind !== 'apiKey') throw new Error('push routes take API keys only');
    return {
      keyId: principal.keyId,
      workspaceId: principal.workspaceId,
      keyCreatorId: (await ctx.storage.repos.apiKeys.findById(principal.keyId))?.createdBy?.userId ?? null,
    };
  };

  api.get(
    `${PUSH_SESSIONS_PATH}/:sessionId`,
    {
      ...pushKey,
      schema: {
        summary: 'How far a pushed session is held',
        description:
          "How many messages of a session a desktop pushed this server holds, its `updatedAt` and its `status`. 404 when the key's workspace has no session of that id yet; 409 when the id is another workspace's, a session this server ran itself (a push never changes either), or one pushed with another key whose maker is not this key's.",
        tags: ['push'],
        params: PushParamsSchema,
        response: { 200: PushedStateSchema, ...errorResponses(400, 401, 403, 404, 409, 429, 500) },
      },
    },
    async (request) => {
      const state = await pushedState(target, await pusherOf(request), request.params.sessionId);
      if (!state) throw notFound(`No session ${request.params.sessionId} has been pushed here`);
      return state;
    },
  );

  api.post(
    PUSH_SESSIONS_PATH,
    {
      ...pushKey,
      bodyLimit: PUSH_BODY_LIMIT,
      schema: {
        summary: 'Push a part of a session',
        description:
          "Adds a desktop's session, or the messages it gained, to the key's workspace: the session's export record, and the message records after the first `from`. Applied only when the server holds exactly `from` messages of it (409 otherwise, for an id of another workspace or of a session run here, and for a session first pushed with another key, unless both keys were made by one person); the part that reaches `messageCount` also sets the session's status, tasks, branch and pull request. The session shows `pushedFrom`, as the first push said. A member's key attributes the session to that member; a key the administrator made, to the member whose email is the author's, else to the workspace's owner: the answer says whom, and `authorNote` why when it is not the desktop's author. A time more than 5 minutes after the server's clock, or a record nested more than 64 levels deep, is a 400. At most 17 MiB.",
        tags: ['push'],
        body: PushPartSchema,
        response: { 200: PushAnswerSchema, ...errorResponses(400, 401, 403, 409, 413, 429, 500, 503) },
      },
    },
    async (request) => {
      const { state, row, created } = await receivePushPart(target, await pusherOf(request), request.body);
      // The team's open dashboards see the session arrive, or change, as they see any other.
      ctx.events.publish(row.workspaceId, {
        type: created ? 'session.created' : 'session.updated',
        sessionId: row.id,
        session: toSummary(row, 'both'),
      });
      return state;
    },
  );
}
