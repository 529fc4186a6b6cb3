import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createAccounts, type Accounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, steppableClock, systemClock, type Clock } from '../../src-main/clock.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { createEventLog, type LogLevel } from '../../src-main/event-log.js';
import { secureDataDir } from '../../src-main/data-dir-permissions.js';
import { buildApp } from '../../src-main/server/app.js';
import { newLaunchToken } from '../../src-main/server/auth/launch-token.js';
import { newSetupCode } from '../../src-main/server/auth/setup-code.js';
import { appDataOf, openTeamDatabase, type OpenData } from '../../src-main/server/start.js';
import { createRepositories, type Repositories } from '../../src-main/store/repositories.js';
import type { Storage } from '../../src-main/store/storage.js';
import { Store, type StoreOptions } from '../../src-main/store/store.js';
import { storageOf, transcriptsOf } from '../../src-main/store/sqljs-storage.js';
import { databaseFor, TEST_BACKEND, type TestBackend } from './test-database.js';

export function tempDir(prefix = 'sessiondesk-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer {
  url: string;
  origin: string;
  /** What `serve` would print in its URL: setup and the demo sign-in need it (see `launchCookie`). */
  launchToken: string;
  dataDir: string;
  /** Where the agents' sandboxes are: beside the data directory, never inside. */
  sandboxRoot: string;
  /** The database under it: sql.js by default, PostgreSQL under SESSIONDESK_TEST_DATABASE=postgres. */
  backend: TestBackend;
  /** The team server's database URL; null over sql.js. */
  databaseUrl: string | null;
  /** The repositories as services call them, on either database: seed and inspect through these. */
  storage: Storage;
  accounts: Accounts;
  /** The sql.js store: only in a test declared `sqljsOnly` (reading it on PostgreSQL throws). */
  store: Store;
  /** Synchronous sql.js repositories over `store`: only in a test declared `sqljsOnly`. */
  repos: Repositories;
  app: FastifyInstance;
  /** Stops the server and closes the store; the data directory stays until `dispose`. */
  stop(): Promise<void>;
  /**
   * Stops, and deletes the data directory unless a server started later over the same
   * directory still runs: the last of them to be disposed deletes it.
   */
  dispose(): Promise<void>;
}

export interface TestServerOptions {
  clock?: Clock;
  dataDir?: string;
  adminToken?: string;
  rendererDir?: string;
  /**
   * Milliseconds between the demo agent's steps. By default an hour: a new session's
   * agent is running (the session stays active) but writes nothing while a test looks.
   */
  agentPaceMs?: number;
  agentCommand?: string[];
  /** Variables agents may see beyond the allow-list (SESSIONDESK_AGENT_ENV). */
  agentEnvNames?: string[];
  /** The environment agent CLIs are found in and run with (PATH with recorded CLIs, say). */
  agentEnv?: NodeJS.ProcessEnv;
  /** The server's log, as JSON lines (what `serve --log-format json` writes). */
  log?: { level: LogLevel; stream: NodeJS.WritableStream };
  store?: Partial<StoreOptions>;
  cacheBytes?: number;
  eventStreamMaxMs?: number;
  bodyTimeoutMs?: number;
  maxConnections?: number;
  /** Agent programs running at once before runs queue (the server's default: 3). */
  maxRuns?: number;
  /** How long one search may run before it is answered 503 (the server's default: 5 s). */
  searchTimeLimitMs?: number;
  /** The address people use (`serve --public-url`): the launch token is then a setup code. */
  publicUrl?: string;
  /** Proxies whose forwarded headers are believed (`serve --trust-proxy`). */
  trustProxy?: string[];
  /** The launch token (or, with `publicUrl`, the setup code); a new one by default. */
  launchToken?: string;
}

/** Opens what `serve` would over `dataDir`: the sql.js store, or a team server's database. */
async function openData(dataDir: string, clock: Clock, options: TestServerOptions): Promise<OpenData> {
  if (TEST_BACKEND === 'postgres') {
    if (options.store) throw new Error("store options are the sql.js store's: declare the test sqljsOnly");
    // As `serve` does before it opens the database.
    secureDataDir(dataDir, silentLogger);
    return openTeamDatabase({ dataDir, clock, databaseUrl: await databaseFor(dataDir) });
  }
  const store = await Store.open({ dataDir, clock, logger: silentLogger, ...options.store });
  return {
    store,
    sql: null,
    leases: null,
    storage: storageOf(store),
    transcripts: transcriptsOf(store),
    close: () => store.close(),
  };
}

function sqljsOnlyHandle(name: string): never {
  throw new Error(
    `server.${name} is the sql.js store's; on PostgreSQL seed through server.storage, or declare the test sqljsOnly(reason)`,
  );
}

/**
 * The servers not yet disposed, by data directory. A test that reopens a directory has two
 * servers over it, and disposing the first must not delete what the second is writing (its
 * search index, say): `rmSync` then fails with ENOTEMPTY, or the second loses its files.
 */
const serversByDataDir = new Map<string, Set<object>>();

/** A real server on an ephemeral loopback port, over a fresh data directory. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const sandboxRoot = defaultSandboxRoot(dataDir);
  const clock = options.clock ?? systemClock;
  const data = await openData(dataDir, clock, options);
  const launchToken = options.launchToken ?? (options.publicUrl ? newSetupCode() : newLaunchToken());
  const app = await buildApp({
    ...appDataOf(data, dataDir),
    clock,
    config: {
      allowedHosts: [],
      launchToken,
      ...(options.adminToken ? { adminToken: options.adminToken } : {}),
      ...(options.rendererDir ? { rendererDir: options.rendererDir } : {}),
      ...(options.cacheBytes === undefined ? {} : { cacheBytes: options.cacheBytes }),
      ...(options.eventStreamMaxMs === undefined ? {} : { eventStreamMaxMs: options.eventStreamMaxMs }),
      ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
      ...(options.searchTimeLimitMs === undefined ? {} : { searchTimeLimitMs: options.searchTimeLimitMs }),
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
      ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    },
    ...(options.log ? { logger: createEventLog({ ...options.log, format: 'json', clock }) } : {}),
    agents: {
      demoPaceMs: options.agentPaceMs ?? 3_600_000,
      ...(options.agentCommand ? { defaultCommand: options.agentCommand } : {}),
      ...(options.agentEnvNames ? { agentEnvNames: options.agentEnvNames } : {}),
      ...(options.agentEnv ? { env: options.agentEnv } : {}),
      ...(options.maxRuns === undefined ? {} : { maxRuns: options.maxRuns }),
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const url = `http://127.0.0.1:${address.port}`;
  const { store } = data;
  const repos = store ? createRepositories(store.db) : null;
  const users = serversByDataDir.get(dataDir) ?? new Set<object>();
  serversByDataDir.set(dataDir, users);
  const self = {};
  users.add(self);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
    await data.close();
  };
  return {
    url,
    origin: url,
    launchToken,
    dataDir,
    sandboxRoot,
    backend: TEST_BACKEND,
    databaseUrl: data.sql ? await databaseFor(dataDir) : null,
    storage: data.storage,
    accounts: createAccounts(data.storage, clock),
    get store() {
      return store ?? sqljsOnlyHandle('store');
    },
    get repos() {
      return repos ?? sqljsOnlyHandle('repos');
    },
    app,
    stop,
    async dispose() {
      await stop();
      users.delete(self);
      if (users.size > 0) return;
      serversByDataDir.delete(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(sandboxRoot, { recursive: true, force: true });
    },
  };
}

export { steppableClock };

let counter = 0;
export function uniqueEmail(name = 'user'): string {
  counter += 1;
  return `${name}-${process.pid}-${counter}@example.test`;
}

export const PASSWORD = 'correct horse battery';

export interface Actor {
  userId: string;
  email: string;
  cookie: string;
}

/** Signs in over HTTP and returns the `__session` cookie pair to send back. */
export async function signIn(server: TestServer, email: string, password = PASSWORD): Promise<string> {
  const response = await fetch(`${server.url}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.origin },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const pair = setCookie.split(';')[0];
  if (!pair?.startsWith('__session=')) throw new Error(`no session cookie in ${setCookie}`);
  return pair;
}

/**
 * Presents the launch token as the dashboard does when opened from the URL `serve` printed,
 * and returns the `__launch` cookie pair that setup and the demo sign-in need.
 */
export async function launchCookie(server: { url: string; launchToken: string }): Promise<string> {
  const response = await fetch(`${server.url}/api/auth/launch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url },
    body: JSON.stringify({ token: server.launchToken }),
  });
  if (response.status !== 204) throw new Error(`launch failed: ${response.status} ${await response.text()}`);
  const pair = (response.headers.get('set-cookie') ?? '').split(';')[0];
  if (!pair?.startsWith('__launch=')) throw new Error('no launch cookie');
  return pair;
}

/** A user with a workspace of their own, signed in, and an API key for that workspace. */
export async function seedWorkspace(
  server: TestServer,
  name = 'owner',
): Promise<{ user: Actor; organizationId: string; apiKey: string; keyId: string }> {
  const email = uniqueEmail(name);
  const created = await server.accounts.createUser({ email, name: `User ${name}`, password: PASSWORD });
  const workspace = await server.accounts.createWorkspace({ name: `${name}'s workspace`, ownerEmail: email });
  const key = await server.accounts.createKey({ organizationId: workspace.organizationId, label: 'test' });
  const cookie = await signIn(server, email);
  return {
    user: { userId: created.id, email, cookie },
    organizationId: workspace.organizationId,
    apiKey: key.key,
    keyId: key.id,
  };
}

/** fetch with the headers a signed-in dashboard would send. */
export function asUser(server: TestServer, cookie: string, method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      cookie,
      origin: server.origin,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** fetch with an API key in the x-api-key header. */
export function withKey(server: TestServer, apiKey: string, method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      'x-api-key': apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

export async function createSession(
  server: TestServer,
  cookie: string,
  body: Record<string, unknown>,
): Promise<{ id: string; [key: string]: unknown }> {
  const response = await asUser(server, cookie, 'POST', '/api/sessions', body);
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { session: { id: string } }).session;
}

/** Sets the workspace's agent kind, as its owner does in Settings › Agent. */
export async function useAgent(
  server: TestServer,
  owner: { user: { cookie: string }; organizationId: string },
  agent: string,
): Promise<void> {
  const response = await asUser(
    server,
    owner.user.cookie,
    'PUT',
    `/api/workspaces/${owner.organizationId}/agent`,
    { agent },
  );
  if (response.status !== 200)
    throw new Error(`setting the agent failed: ${response.status} ${await response.text()}`);
}

/** Adds a CLI's folder as a history source of the workspace, as an owner does in Settings; its id. */
export async function addHistorySource(
  server: TestServer,
  cookie: string,
  organizationId: string,
  source: { kind: string; rootDir: string },
): Promise<string> {
  const response = await asUser(
    server,
    cookie,
    'POST',
    `/api/workspaces/${organizationId}/history-sources`,
    source,
  );
  const text = await response.text();
  if (response.status !== 201) throw new Error(`adding the source failed: ${response.status} ${text}`);
  return (JSON.parse(text) as { source: { id: string } }).source.id;
}
