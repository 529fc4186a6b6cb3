import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { BODY_LIMIT_BYTES } from '../../src-shared/constants.js';
import { createAccounts } from '../accounts/accounts.js';
import { silentLogger, type Clock, type Logger } from '../clock.js';
import type { Sql } from 'postgres';
import type { Storage } from '../store/storage.js';
import { startEventRelay } from './event-relay.js';
import type { PostgresRunLeases } from '../store-postgres/leases.js';
import { postgresRunRequests } from '../store-postgres/run-requests.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import { storageOf, transcriptsOf } from '../store/sqljs-storage.js';
import type { Store } from '../store/store.js';
import { createAccess } from './access.js';
import { createAuthenticator, routeSecurity } from './auth/authenticate.js';
import { CredentialChanges } from './auth/credential-changes.js';
import { refuseDuplicateSessionCookies } from './auth/cookie-tossing.js';
import { bodyTimeout } from './body-timeout.js';
import { createHostGuard, originGuard } from './auth/localhost-guard.js';
import {
  BAD_KEY_LIMIT,
  MemoryFailureLimiter,
  MemoryRemembered,
  type FailureLimit,
  type FailureLimiter,
} from './auth/rate-limit.js';
import { createSignInThrottle, KNOWN_CLIENT_MS, SIGN_IN_LIMITS } from './auth/sign-in-throttle.js';
import { postgresFailureWindows, postgresRemembered } from '../store-postgres/failure-windows.js';
import { createLaunchGate, createSetupCodeGate, type CookieSecurity } from './auth/launch-token.js';
import { memorySetupCodes, SETUP_CODE_TTL_MS, setupCodeHash } from './auth/setup-code.js';
import { postgresSetupCodes } from '../store-postgres/setup-codes.js';
import { parsePublicUrl, trustsAddress } from './deployment.js';
import { healthRoutes } from './routes/health.js';
import type { AppContext, ServerConfig } from './context.js';
import { answerClientError, registerErrorHandling, sendFrameworkError, sendNotFound } from './errors.js';
import { adminRoutes } from './routes/admin.js';
import { authRoutes } from './routes/auth.js';
import { identitySignInRoutes } from './routes/identity-sign-in.js';
import { createSignInFlows } from '../identity/sign-in-flows.js';
import { rendererRoutes } from './routes/renderer.js';
import { sessionRoutes } from './routes/sessions.js';
import { sessionSummaryRoutes } from './routes/session-summary.js';
import { agentRoutes } from './routes/agents.js';
import { workspaceRoutes } from './routes/workspaces.js';
import { historyRoutes } from './routes/history.js';
import { eventRoutes } from './routes/events.js';
import { demoRoutes } from './routes/demo.js';
import { changesRoutes } from './routes/changes.js';
import { reviewRoutes } from './routes/reviews.js';
import { continuationRoutes } from './routes/continuation.js';
import { pullRequestRoutes } from './routes/pull-requests.js';
import { approvalRoutes } from './routes/approvals.js';
import { createApprovals } from '../approvals/service.js';
import type { AgentConfig } from '../agents/run/config.js';
import { AgentHost } from '../agents/run/host.js';
import { DEFAULT_AGENT_CONFIG } from '../agents/run/config.js';
import { createHistoryFollower } from '../history/follower.js';
import { createRunHolds } from '../history/run-holds.js';
import { EventBus } from '../events/event-bus.js';
import { PostgresSearchIndex } from '../search/postgres-search-index.js';
import { SEARCH_TIME_LIMIT_MS, SearchIndex } from '../search/search-index.js';
import { createSearchService } from '../search/search-service.js';
import { pushRoutes } from './routes/push.js';
import { searchRoutes } from './routes/search.js';
import { createSessionCommands } from '../sessions/commands.js';
import { createSessionChanges } from '../changes/session-changes.js';
import { createSessionService } from '../sessions/service.js';
import { CONTENT_SECURITY_POLICY, redactUrl } from './security-headers.js';
import { ResponseCache, type ListPageText, type SessionChanges } from './response-cache.js';

export type { ServerConfig } from './context.js';

/** A team server's data on PostgreSQL (`store-postgres/`), and the folder local to this process. */
export interface TeamDatabase {
  storage: Storage;
  transcripts: TranscriptSource;
  dataDir: string;
  /** The pool, for the live events the server processes relay to each other. */
  sql: Sql;
  /** The database's URL, for the connection search runs its statements on. */
  url: string;
  /** Which process's agent runs are whose (and where requests about them go). */
  leases: PostgresRunLeases;
}

export interface AppDeps {
  /** The desktop's data: sql.js in its data directory. Exactly one of `store` and `team`. */
  store?: Store;
  /** A team server's data on PostgreSQL. */
  team?: TeamDatabase;
  clock: Clock;
  config: ServerConfig;
  /** Where events are told (sessions, sign-ins, refusals, errors; each request at debug); omitted, nowhere. */
  logger?: Logger;
  version?: string;
  /** How agents run; omitted, the demo agent at a pace a person can follow. */
  agents?: AgentConfig;
}

/**
 * 64 MiB for full sessions (a few thousand of about 20 KB) and 16 MiB for list pages
 * (hundreds of pages of 50). No single answer may take over a quarter of its cache, so a
 * whole list of thousands of sessions (several MB) is always read afresh.
 */
const DEFAULT_CACHE_BYTES = 80 * 1024 * 1024;
/** Connections open at once (event streams included); beyond it, new ones are closed. */
const DEFAULT_MAX_CONNECTIONS = 1024;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** A team server's processes do not yet tell each other what changed: nothing is cached there. */
const NO_CHANGES: SessionChanges = { onChange: () => () => undefined };

function createCaches(changes: SessionChanges, bytes: number): AppContext['caches'] {
  return {
    sessions: new ResponseCache<Buffer>(changes, {
      maxBytes: Math.floor(bytes * 0.8),
      drop: 'that session',
      sizeOf: (body) => body.length,
    }),
    lists: new ResponseCache<ListPageText>(changes, {
      maxBytes: Math.floor(bytes * 0.2),
      drop: 'all',
      sizeOf: (page) => page.sessions.length + (page.nextCursor?.length ?? 0),
    }),
  };
}

/** The API's own description, generated from the same zod schemas that validate requests. */
const OPENAPI_INFO = {
  title: 'Session Desk API',
  description:
    'The Session Management API served by Session Desk on 127.0.0.1: sessions, their messages and tasks, and workspace stats.',
};

/**
 * Who may set up the first account: whoever holds the URL's launch token, or, on a server with a
 * public URL (no secret in a URL), whoever types the setup code `serve` printed. A team server's
 * processes accept each other's codes through the database; this process's code is offered from
 * its start until it stops (or a day has passed).
 */
function launchGate(app: FastifyInstance, deps: AppDeps, cookies: CookieSecurity) {
  const code = deps.config.launchToken;
  if (deps.config.publicUrl === undefined) return createLaunchGate(code, cookies);
  const codes = deps.team ? postgresSetupCodes(deps.team.sql) : memorySetupCodes();
  if (code !== undefined) {
    const hash = setupCodeHash(code);
    app.addHook('onReady', async () => {
      const now = deps.clock.now().getTime();
      await codes.add(hash, now + SETUP_CODE_TTL_MS, now);
    });
    app.addHook('onClose', () => codes.remove(hash).catch(() => undefined));
  }
  return createSetupCodeGate(codes, deps.clock, cookies);
}

/** The JSON-schema compilers Fastify would make: none, since zod's compile every schema here. */
function zodOnly() {
  return (): never => {
    throw new Error('a route schema reached a JSON-schema compiler: the server compiles zod schemas only');
  };
}

/**
 * Builds the server without starting it: entry points call `listen`, tests build their own.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const publicUrl = deps.config.publicUrl === undefined ? undefined : parsePublicUrl(deps.config.publicUrl);
  const trustsProxy = deps.config.trustProxy ? trustsAddress(deps.config.trustProxy) : undefined;
  const app = Fastify({
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Forwarded headers are believed only from the proxies the administrator named: from each
    // of them the next address to the left in X-Forwarded-For is taken, and the first address
    // that is not one of them is the client (`request.ip`), for limits and logs.
    trustProxy: trustsProxy ? (address: string) => trustsProxy(address) : false,
    requestIdHeader: false,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: true,
    // Node's own limit on receiving a whole request (answered 408); a body that trickles in
    // is cut sooner by the body time-out below. Headers must arrive within 20 s.
    requestTimeout: 10 * 60_000,
    http: { requireHostHeader: false, headersTimeout: 20_000 },
    routerOptions: { maxParamLength: 200 },
    // Fastify's own answers to a malformed URL or request repeat it, and in another shape.
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: answerClientError,
    // Node would answer a request without Host with a bare 400; the Host guard refuses it (403).
    // Fastify's own log would be two JSON lines per request: the server tells its events itself.
    logger: false,
    // Every schema is a zod one, checked and serialized by zod's compilers (set below): without
    // factories of its own Fastify loads Ajv and fast-json-stringify at start, never to use them.
    schemaController: { compilersFactory: { buildValidator: zodOnly, buildSerializer: zodOnly } },
  });
  app.server.maxConnections = deps.config.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Cross-site "simple" requests can carry text/plain; with no parser they are refused (415).
  app.removeContentTypeParser('text/plain');

  const logger = deps.logger ?? silentLogger;
  const store = deps.store ?? null;
  if (!store === !deps.team) throw new Error('buildApp takes a store or a team database, one of them');
  const storage = store ? storageOf(store) : deps.team!.storage;
  const transcripts = store ? transcriptsOf(store) : deps.team!.transcripts;
  const dataDir = store ? store.dataDir : deps.team!.dataDir;
  // A team server's processes share their counts, so a limit cannot be escaped by reaching
  // another process; the desktop is one process and counts in memory.
  const limiter = (scope: string, limit: FailureLimit): FailureLimiter =>
    deps.team
      ? postgresFailureWindows(deps.team.sql, { scope, ...limit, now: () => deps.clock.now().getTime() })
      : new MemoryFailureLimiter(limit, deps.clock);
  const cookies: CookieSecurity = { secure: publicUrl?.secure ?? false };
  const events = new EventBus();
  const sessions = createSessionService({ storage, clock: deps.clock, events, logger });
  // Imported sessions' files, held while a run of ours resumes their conversation.
  const historyHolds = createRunHolds({ storage, clock: deps.clock, events });
  const approvals = createApprovals({ storage, clock: deps.clock, events, logger });
  // On a team database, a stop, follow-up or decision sent to a process that does not run the
  // session's agent goes to the one that does.
  const requests = deps.team
    ? await postgresRunRequests({ sql: deps.team.sql, leases: deps.team.leases, logger })
    : undefined;
  if (requests) app.addHook('onClose', () => requests.close());
  const agents = new AgentHost({
    service: sessions,
    approvals,
    storage,
    transcripts: { storage, transcripts },
    dataDir,
    config: deps.agents ?? DEFAULT_AGENT_CONFIG,
    logger,
    history: historyHolds,
    ...(deps.team ? { leases: deps.team.leases } : {}),
    ...(requests ? { requests } : {}),
  });
  // Search keeps its index beside the sql.js store, or in the team's PostgreSQL.
  const searchIndex = store
    ? new SearchIndex({ store, logger, searchTimeLimitMs: deps.config.searchTimeLimitMs })
    : new PostgresSearchIndex({
        sql: deps.team!.sql,
        url: deps.team!.url,
        source: { storage, transcripts },
        logger,
        timeLimitMs: deps.config.searchTimeLimitMs ?? SEARCH_TIME_LIMIT_MS,
      });
  // What sessions' agents changed, from git: shown by the changes route, named by reviews.
  const changes = createSessionChanges({
    repos: storage.repos,
    clock: deps.clock,
    sandboxRoot: () => agents.sandboxRoot,
    env: deps.agents?.env ?? process.env,
  });
  const ctx: AppContext = {
    events,
    searchIndex,
    search: createSearchService({ index: searchIndex, source: { storage, transcripts } }),
    sessions,
    sessionCommands: createSessionCommands({
      service: sessions,
      agents,
      approvals,
      repos: storage.repos,
      changes,
      logger,
    }),
    changes,
    agents,
    approvals,
    historyHolds: historyHolds.held,
    agentEnv: deps.agents?.env ?? process.env,
    caches: createCaches(store ?? NO_CHANGES, store ? (deps.config.cacheBytes ?? DEFAULT_CACHE_BYTES) : 0),
    store,
    dataDir,
    storage,
    transcripts,
    access: createAccess(storage.repos),
    credentialChanges: new CredentialChanges(),
    accounts: createAccounts(storage, deps.clock),
    clock: deps.clock,
    logger,
    config: deps.config,
    auth: createAuthenticator({
      storage,
      clock: deps.clock,
      logger,
      badKeyLimiter: limiter('api-key', BAD_KEY_LIMIT),
    }),
    launch: launchGate(app, deps, cookies),
    cookies,
    signInThrottle: createSignInThrottle({
      clientOnAccount: limiter('sign-in', SIGN_IN_LIMITS.clientOnAccount),
      client: limiter('sign-in-client', SIGN_IN_LIMITS.client),
      account: limiter('sign-in-account', SIGN_IN_LIMITS.account),
      known: deps.team
        ? postgresRemembered(deps.team.sql, {
            scope: 'sign-in-known',
            keepMs: KNOWN_CLIENT_MS,
            now: () => deps.clock.now().getTime(),
          })
        : new MemoryRemembered(KNOWN_CLIENT_MS, deps.clock),
    }),
    signInFlows: deps.config.identityProvider
      ? createSignInFlows({ storage, clock: deps.clock, logger, ...deps.config.identityProvider })
      : null,
  };

  // On a team database, each process's events reach the clients of every other one.
  if (deps.team) {
    const relay = await startEventRelay({
      sql: deps.team.sql,
      events,
      credentials: ctx.credentialChanges,
      reads: { storage, transcripts },
      logger,
    });
    app.addHook('onClose', () => relay.close());
  }

  app.decorateRequest('principal', null);
  app.decorateRequest('ownOrigin', '');
  app.addHook(
    'onRequest',
    createHostGuard(deps.config.allowedHosts, {
      ...(publicUrl ? { publicUrl } : {}),
      ...(trustsProxy ? { trustsProxy } : {}),
    }),
  );
  app.addHook('onRequest', originGuard);
  app.addHook('onRequest', refuseDuplicateSessionCookies);
  app.addHook('onRequest', bodyTimeout(deps.config.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS));
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('text/html')) {
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
    }
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
    return payload;
  });
  registerErrorHandling(app, logger);
  // Each request in one line, for whoever asked for every request.
  app.addHook('onResponse', async (request, reply) => {
    const url = redactUrl(request.url);
    const ms = Math.round(reply.elapsedTime);
    logger.debug?.(`${request.method} ${url} ${reply.statusCode} ${ms} ms`, {
      event: 'request',
      method: request.method,
      url,
      status: reply.statusCode,
      ms,
      requestId: request.id,
      client: request.ip,
    });
  });
  // Sessions an agent was working on when the server last stopped are closed off first.
  app.addHook('onReady', async () => {
    agents.prepareSandboxRoot();
    // On a team database other processes' runs may still wait on theirs: recovery expires those
    // of the runs it takes over.
    const expired = store ? await approvals.expireAbandoned() : 0;
    if (expired > 0) logger.warn(`Marked ${expired} request(s) of interrupted runs as expired.`);
    const interrupted = await agents.recoverInterrupted();
    if (interrupted > 0) logger.warn(`Marked ${interrupted} interrupted session(s) as failed.`);
    // Messages written while no server ran (imports, a rebuilt index) are indexed in the background.
    searchIndex.sweep();
  });
  // The agent CLIs' own session folders that `sessiondesk history import` remembered.
  const follower = createHistoryFollower({
    storage,
    clock: deps.clock,
    events,
    logger,
    holds: historyHolds.held,
  });
  app.addHook('onReady', async () => {
    await historyHolds.ready;
    follower.start();
  });
  // Runs are stopped (and recorded) while the store is still open.
  app.addHook('preClose', async () => {
    await follower.close();
    await agents.close();
  });
  app.addHook('onClose', async () => {
    await searchIndex.close();
    ctx.caches.sessions.close();
    ctx.caches.lists.close();
  });

  await app.register(fastifyCookie);
  // Each operation says which credentials it takes, so generated clients and Swagger UI send them.
  app.addHook('onRoute', (route) => {
    const security = routeSecurity(route.onRequest);
    if (security && route.schema) route.schema = { ...route.schema, security };
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { ...OPENAPI_INFO, version: deps.version ?? '0.0.0' },
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
          bearer: { type: 'http', scheme: 'bearer' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: '__session' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });

  const api = app.withTypeProvider<ZodTypeProvider>();
  healthRoutes(api, ctx);
  sessionRoutes(api, ctx);
  sessionSummaryRoutes(api, ctx);
  authRoutes(api, ctx);
  identitySignInRoutes(api, ctx);
  workspaceRoutes(api, ctx);
  historyRoutes(api, ctx);
  agentRoutes(api, ctx);
  eventRoutes(api, ctx);
  demoRoutes(api, ctx);
  changesRoutes(api, ctx);
  reviewRoutes(api, ctx);
  continuationRoutes(api, ctx);
  pullRequestRoutes(api, ctx);
  approvalRoutes(api, ctx);
  searchRoutes(api, ctx);
  pushRoutes(api, ctx);
  if (deps.config.adminToken) adminRoutes(api, ctx, deps.config.adminToken);
  api.get('/api/openapi.json', { schema: { hide: true } }, () => app.swagger());
  const dashboardPage = await rendererRoutes(app, deps.config.rendererDir);

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (request.method === 'GET' && !path.startsWith('/api/') && path !== '/api') return dashboardPage(reply);
    return sendNotFound(reply);
  });
  return app;
}
