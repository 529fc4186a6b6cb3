import { timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ADMIN_PROOF_PATH, adminProof, CHALLENGE_PATTERN } from '../../admin-proof.js';
import {
  AddMemberBodySchema,
  CreateKeyBodySchema,
  CreateUserBodySchema,
  CreateWorkspaceBodySchema,
  ListKeysQuerySchema,
  RevokeKeyBodySchema,
  SetPasswordBodySchema,
} from '../../../src-shared/accounts.js';
import { HISTORY_IMPORT_PATH, HistoryImportBodySchema } from '../../../src-shared/history.js';
import { AGENT_CHECK_ADMIN_PATH, AgentCheckAdminBodySchema } from '../../../src-shared/agent-check.js';
import { createDirectory } from '../../accounts/directory.js';
import { checkAgentChoice } from '../../agents/run/agent-choice.js';
import { runHistoryImport } from '../../history/service.js';
import { folderRules } from '../../history/source-folder.js';
import { hashSecret } from '../../accounts/secrets.js';
import { backupChunks } from '../../data/backup.js';
import { exportChunks } from '../../data/export.js';
import { ExportQuerySchema, ImportQuerySchema, ImportReportSchema } from '../../data/format.js';
import { ImportInputError, importSessions } from '../../data/import.js';
import { readLines } from '../../data/lines.js';
import { AppError, notFound, unauthorized } from '../../errors.js';
import { localStore, type AppContext } from '../context.js';
import { toSummary } from '../../sessions/summary.js';

export const ADMIN_TOKEN_HEADER = 'x-sessiondesk-admin-token';
/** The CRC-32 of a backup's bytes, so the CLI can tell a complete copy from a cut one. */
export const NDJSON = 'application/x-ndjson';

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
  const { accounts, events } = ctx;

  // Unauthenticated by design: the CLI asks it before it sends anything secret.
  api.get(
    ADMIN_PROOF_PATH,
    { schema: { ...schema, querystring: z.object({ challenge: z.string().regex(CHALLENGE_PATTERN) }) } },
    async (request) => ({
      proof: adminProof(adminToken, request.query.challenge, request.socket.localPort ?? 0),
    }),
  );

  // `sessiondesk history import` while this server holds the data directory.
  api.post(
    HISTORY_IMPORT_PATH,
    { onRequest, schema: { ...schema, body: HistoryImportBodySchema } },
    async (request) => ({
      sources: await runHistoryImport(
        {
          store: localStore(ctx, 'Importing history'),
          storage: ctx.storage,
          clock: ctx.clock,
          events,
          holds: ctx.historyHolds,
        },
        request.body,
        folderRules(ctx.agentEnv, ctx.dataDir, ctx.agents.sandboxRoot),
      ),
    }),
  );

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
    async (request) => {
      checkAgentChoice(ctx.agents, ctx.agentEnv, request.body);
      const workspace = await accounts.createWorkspace(request.body);
      const { settings, source } = await ctx.agents.settingsFor(workspace.organizationId);
      return { workspace, agent: { settings, source } };
    },
  );
  api.post(
    '/api/admin/members',
    { onRequest, schema: { ...schema, body: AddMemberBodySchema } },
    async (request) => accounts.addMemberOrInvite(request.body),
  );
  api.post(
    '/api/admin/members/remove',
    { onRequest, schema: { ...schema, body: AddMemberBodySchema } },
    async (request) => {
      const removed = await accounts.removeMemberByEmail(request.body);
      await ctx.credentialChanges.notify();
      return { removed };
    },
  );
  api.post(
    '/api/admin/users/password',
    { onRequest, schema: { ...schema, body: SetPasswordBodySchema } },
    async (request, reply) => {
      await accounts.setPassword(request.body);
      await ctx.credentialChanges.notify();
      return reply.code(204).send(null);
    },
  );
  // `sessiondesk agent check`: the check runs here, with this server's environment and sandbox.
  api.post(
    AGENT_CHECK_ADMIN_PATH,
    { onRequest, schema: { ...schema, body: AgentCheckAdminBodySchema } },
    async (request) => ctx.agents.checkAgent(request.body.organizationId),
  );
  api.get('/api/admin/users', { onRequest, schema }, async () => ({
    users: await createDirectory(ctx.storage.repos).users(),
  }));
  api.get('/api/admin/workspaces', { onRequest, schema }, async () => ({
    workspaces: await createDirectory(ctx.storage.repos).workspaces(),
  }));
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
      keys: await accounts.listKeys(request.query.organizationId),
    }),
  );
  api.post(
    '/api/admin/keys/revoke',
    { onRequest, schema: { ...schema, body: RevokeKeyBodySchema } },
    async (request, reply) => {
      await accounts.revokeKey(request.body);
      await ctx.credentialChanges.notify();
      return reply.code(204).send();
    },
  );

  // Data you can keep: the CLI's export, import and backup go through a running server, so
  // nothing reads or writes the files behind its back.
  api.get(
    '/api/admin/export',
    { onRequest, schema: { ...schema, querystring: ExportQuerySchema } },
    async (request, reply) => {
      const { organizationId, format } = request.query;
      if (!(await ctx.storage.repos.workspaces.findById(organizationId)))
        throw notFound(`Workspace ${organizationId} not found`);
      // Pulled session by session as the socket drains: never the whole export in memory. On
      // either database: a team server's export is the one its data directory would give.
      const chunks = exportChunks(
        { storage: ctx.storage, transcripts: ctx.transcripts },
        organizationId,
        format,
        ctx.clock.now().toISOString(),
        ctx.agents.sandboxRoot,
      );
      return reply
        .type(format === 'json' ? 'application/json; charset=utf-8' : `${NDJSON}; charset=utf-8`)
        .send(Readable.from(chunks));
    },
  );
  // A tar stream, checked by the CLI as it arrives (its end marker proves it whole).
  api.get('/api/admin/backup', { onRequest, schema }, async (_request, reply) => {
    const chunks = backupChunks(localStore(ctx, 'Backup'));
    // The first piece is awaited here, so a backup that cannot start is an error answer.
    const first = await chunks.next();
    const all = async function* () {
      if (!first.done) yield first.value;
      yield* chunks;
    };
    return reply.type('application/x-tar').send(Readable.from(all()));
  });
  // The export arrives as a stream and is read line by line, so its size has no limit here;
  // the parser is registered in this route's own scope only.
  void api.register(async (scope) => {
    scope.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/admin/import',
      {
        onRequest,
        schema: { ...schema, querystring: ImportQuerySchema, response: { 200: ImportReportSchema } },
      },
      async (request) => {
        if (!(request.body instanceof Readable)) {
          throw new AppError(415, 'unsupported_media_type', `Send the export as ${NDJSON}`);
        }
        try {
          return await importSessions(readLines(request.body), request.query.organizationId, {
            storage: ctx.storage,
            onImported: (row) =>
              events.publish(row.workspaceId, {
                type: 'session.created',
                sessionId: row.id,
                session: toSummary(row, 'both'),
              }),
          });
        } catch (err) {
          if (err instanceof ImportInputError) throw new AppError(400, 'bad_request', err.message);
          throw err;
        }
      },
    );
  });
}
