import { mkdirSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { Clock, Logger } from '../clock.js';
import { announceServer, newAdminToken, withdrawServer } from '../server-file.js';
import { Store } from '../store/store.js';
import type { AgentConfig } from '../agents/run/config.js';
import { buildApp, type AppDeps, type ServerConfig } from './app.js';
import { newLaunchToken, withLaunchToken } from './auth/launch-token.js';
import { newSetupCode } from './auth/setup-code.js';
import { ownAccountCount } from '../demo/people.js';
import { createAccounts } from '../accounts/accounts.js';
import { seedDemo } from '../demo/seed.js';
import { retireDemoPublishedPassword } from '../demo/sign-in.js';
import { secureDataDir } from '../data-dir-permissions.js';
import { storageOf, transcriptsOf } from '../store/sqljs-storage.js';
import { acquireLock } from '../store/lock.js';
import type { Sql } from 'postgres';
import type { Storage } from '../store/storage.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import { connect } from '../store-postgres/connect.js';
import { migratePostgres } from '../store-postgres/migrations.js';
import { createPostgresStorage } from '../store-postgres/storage.js';
import { indexMessage } from '../search/postgres-text.js';
import { postgresRunLeases, type PostgresRunLeases } from '../store-postgres/leases.js';

export class PortInUseError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`Port ${port} on ${host} is already in use. Pass another --port, or stop the program using it.`);
  }
}

export interface StartOptions {
  dataDir: string;
  host: string;
  port: number;
  /** When the port is taken, listen on any free one instead of failing (the desktop app). */
  fallbackToFreePort?: boolean;
  rendererDir?: string;
  allowedHosts?: string[];
  /** The address people use (`serve --public-url`): printed instead of the listening one, with a setup code instead of a token. */
  publicUrl?: string;
  /** Proxies whose forwarded headers are believed (`serve --trust-proxy`). */
  trustProxy?: string[];
  clock: Clock;
  /** The store's messages (recovery, damage) and the server's events. */
  logger: Logger;
  version?: string;
  agents?: AgentConfig;
  /** Create the demo workspace (once) before listening. */
  demo?: boolean;
  /** Snapshot once the journals a start would replay pass this (the store's default: 64 MiB). */
  snapshotAfterBytes?: number;
  /** How long one search may run before it is stopped and answered 503 (the server's default: 5 s). */
  searchTimeLimitMs?: number;
  /**
   * A team server's PostgreSQL (`postgres://…`): the record of everything, instead of sql.js in
   * the data directory, which then holds only what is local to this process.
   */
  databaseUrl?: string;
  /** Sign-in through an OpenID Connect provider, discovered already (`serve --oidc-issuer`). */
  identityProvider?: ServerConfig['identityProvider'];
  /** False: email and password do not sign in (`serve --password-sign-in off`). */
  passwordSignIn?: boolean;
}

export interface RunningServer {
  /** Where this process listens, on this machine. */
  url: string;
  /**
   * The URL to open: `url` with the launch token, which setup and the demo's sign-in need; with
   * a public URL, that URL alone (no secret in a URL: see `setupCode`).
   */
  launchUrl: string;
  launchToken: string;
  /** With a public URL and no account yet: the code to type on the first-run page. */
  setupCode?: string;
  app: FastifyInstance;
  /** The desktop's store; null on a team server. */
  store: Store | null;
  storage: Storage;
  /** Stops accepting requests, flushes and closes the store, and removes server.json. */
  close(): Promise<void>;
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<number> {
  try {
    await app.listen({ host, port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(host, port);
    throw err;
  }
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  return address.port;
}

/**
 * Binds `host:port` and holds it while the store opens, so that a port in use fails before
 * the data directory is created or migrated. Null for port 0 (any free port will do).
 *
 * A client may connect at any moment of that (a dashboard tab reconnecting, a script polling):
 * the placeholder answers every request at once with 503 and Retry-After and closes, and a
 * connection that sends nothing is cut after a second. Nothing a client does can hold the
 * start: handing over closes whatever is still connected.
 */
async function reservePort(host: string, port: number): Promise<HttpServer | null> {
  if (port === 0) return null;
  const server = createHttpServer((_request, response) => {
    response.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'retry-after': '1',
      'cache-control': 'no-store',
      connection: 'close',
      'x-content-type-options': 'nosniff',
    });
    response.end(
      JSON.stringify({
        error: { code: 'starting', message: 'Session Desk is starting; try again in a moment.' },
      }),
    );
  });
  server.keepAliveTimeout = 0;
  server.headersTimeout = 1000;
  server.requestTimeout = 1000;
  server.on('connection', (socket) => socket.setTimeout(1000, () => socket.destroy()));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(host, port);
    throw err;
  }
  return server;
}

/** Stops the placeholder: no new connections, and the open ones are cut rather than waited for. */
function release(server: HttpServer | null): Promise<void> {
  if (!server) return Promise.resolve();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}

/** The record of everything a server opened: the desktop's store, or a team server's database. */
export interface OpenData {
  store: Store | null;
  /** A team server's pool; null for the desktop's store. */
  sql: Sql | null;
  /** A team server's database URL, for the connections of its own that search opens. */
  url?: string;
  /** A team server's run leases; null for the desktop's store (its one process holds them all). */
  leases: PostgresRunLeases | null;
  storage: Storage;
  transcripts: TranscriptSource;
  close(): Promise<void>;
}

/** The data directory's sql.js store, its demo password retired and the demo seeded when asked. */
async function openStore(options: StartOptions): Promise<OpenData> {
  const store = await Store.open({
    dataDir: options.dataDir,
    clock: options.clock,
    logger: options.logger,
    ...(options.snapshotAfterBytes === undefined ? {} : { snapshotAfterBytes: options.snapshotAfterBytes }),
  });
  try {
    const storage = storageOf(store);
    if (await retireDemoPublishedPassword(store, storage)) {
      options.logger.warn(
        'The demo accounts had the published password; they have random ones now (serve --demo prints the sign-in).',
      );
    }
    if (options.demo) {
      await seedDemo({
        store,
        storage,
        accounts: createAccounts(storage, options.clock),
        clock: options.clock,
      });
    }
    return {
      store,
      sql: null,
      leases: null,
      storage,
      transcripts: transcriptsOf(store),
      close: () => store.close(),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** What opening a team server's database needs of `StartOptions`. */
export type TeamDatabaseOptions = Pick<StartOptions, 'dataDir' | 'clock' | 'demo'> & { databaseUrl: string };

/**
 * A team server's PostgreSQL, reached and migrated (once across processes started together),
 * and the data directory locked for this process alone (its sandboxes and server.json).
 */
export async function openTeamDatabase(options: TeamDatabaseOptions): Promise<OpenData> {
  if (options.demo)
    throw new Error('The demo workspace lives in a data directory, not on a team server: leave out --demo.');
  // This process's own files (sandboxes, server.json) go there, made as the desktop's store makes it.
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const unlock = acquireLock(options.dataDir);
  try {
    const sql = await connect(options.databaseUrl);
    let leases: PostgresRunLeases;
    try {
      await migratePostgres(sql, { now: () => options.clock.now() });
      leases = await postgresRunLeases(options.databaseUrl);
    } catch (err) {
      await sql.end({ timeout: 1 });
      throw err;
    }
    const { transcripts, ...storage } = createPostgresStorage(sql, { indexer: indexMessage });
    return {
      store: null,
      sql,
      url: options.databaseUrl,
      leases,
      storage,
      transcripts,
      async close() {
        await leases.close().catch(() => undefined);
        await sql.end({ timeout: 5 });
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

/** What `buildApp` is given of what was opened: the store, or the team database. */
export function appDataOf(data: OpenData, dataDir: string): Pick<AppDeps, 'store' | 'team'> {
  if (data.store) return { store: data.store };
  return {
    team: {
      storage: data.storage,
      transcripts: data.transcripts,
      dataDir,
      sql: data.sql!,
      url: data.url!,
      leases: data.leases!,
    },
  };
}

/**
 * How this machine's own programs reach a server listening on `host`: a wildcard address
 * (0.0.0.0, ::) is reached on loopback, where the server answers them.
 */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Opens the store, builds the app and listens: what `sessiondesk serve` and the desktop app share. */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  let reserved: HttpServer | null = null;
  try {
    reserved = await reservePort(options.host, options.port);
  } catch (err) {
    if (!(err instanceof PortInUseError) || !options.fallbackToFreePort) throw err;
  }
  let data: OpenData;
  try {
    secureDataDir(options.dataDir, options.logger);
    data = options.databaseUrl
      ? await openTeamDatabase({ ...options, databaseUrl: options.databaseUrl })
      : await openStore(options);
  } catch (err) {
    await release(reserved);
    throw err;
  }
  const { store, storage } = data;
  const adminToken = newAdminToken();
  // With a public URL no secret goes in a URL: a code to type in, made while setup is to be done.
  const setupCode =
    options.publicUrl !== undefined && (await ownAccountCount(storage.repos).catch(() => 0)) === 0
      ? newSetupCode()
      : undefined;
  const launchToken = options.publicUrl === undefined ? newLaunchToken() : setupCode;
  const build = () =>
    buildApp({
      ...appDataOf(data, options.dataDir),
      clock: options.clock,
      config: {
        allowedHosts: options.allowedHosts ?? [],
        adminToken,
        ...(launchToken === undefined ? {} : { launchToken }),
        ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
        ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
        ...(options.rendererDir === undefined ? {} : { rendererDir: options.rendererDir }),
        ...(options.searchTimeLimitMs === undefined ? {} : { searchTimeLimitMs: options.searchTimeLimitMs }),
        ...(options.identityProvider ? { identityProvider: options.identityProvider } : {}),
        ...(options.passwordSignIn === undefined ? {} : { passwordSignIn: options.passwordSignIn }),
      },
      logger: options.logger,
      ...(options.version ? { version: options.version } : {}),
      ...(options.agents ? { agents: options.agents } : {}),
    });
  let app: FastifyInstance | undefined;
  try {
    app = await build();
    // Handed over to the server just before it listens.
    await release(reserved);
    let port: number;
    try {
      port = await listen(app, options.host, options.port);
    } catch (err) {
      if (!(err instanceof PortInUseError) || !options.fallbackToFreePort) throw err;
      await app.close();
      app = await build();
      port = await listen(app, options.host, 0);
    }
    const url = `http://${urlHost(options.host)}:${port}`;
    announceServer(
      options.dataDir,
      { url, host: options.host, port, pid: process.pid, startedAt: options.clock.now().toISOString() },
      adminToken,
    );
    const name = options.version ? `Session Desk ${options.version}` : 'Session Desk';
    options.logger.info(`${name} listening at ${url}`, {
      event: 'server.started',
      url,
      dataDir: options.dataDir,
      version: options.version,
      pid: process.pid,
    });
    const running = app;
    let closing: Promise<void> | undefined;
    return {
      url,
      launchUrl:
        options.publicUrl !== undefined ? options.publicUrl : withLaunchToken(url, launchToken ?? ''),
      launchToken: launchToken ?? '',
      ...(setupCode === undefined ? {} : { setupCode }),
      app: running,
      store,
      storage,
      close() {
        closing ??= (async () => {
          withdrawServer(options.dataDir);
          await running.close();
          await data.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await release(reserved);
    await app?.close().catch(() => undefined);
    await data.close().catch(() => undefined);
    throw err;
  }
}
