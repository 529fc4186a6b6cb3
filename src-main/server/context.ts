import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Accounts } from '../accounts/accounts.js';
import type { Approvals } from '../approvals/service.js';
import type { AgentHost } from '../agents/run/host.js';
import type { EventBus } from '../events/event-bus.js';
import type { SessionChanges } from '../changes/session-changes.js';
import type { SessionCommands } from '../sessions/commands.js';
import type { SessionService } from '../sessions/service.js';
import type { SearchService, TranscriptIndex } from '../search/search-service.js';
import type { Clock, Logger } from '../clock.js';
import type { IdentityProvider } from '../identity/provider.js';
import type { SignInFlows } from '../identity/sign-in-flows.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import type { Storage } from '../store/storage.js';
import type { Store } from '../store/store.js';
import type { Access } from './access.js';
import type { CredentialChanges } from './auth/credential-changes.js';
import type { Authenticator, Principal } from './auth/authenticate.js';
import type { SignInThrottle } from './auth/sign-in-throttle.js';
import type { CookieSecurity, LaunchGate } from './auth/launch-token.js';
import type { ListPageText, ResponseCache } from './response-cache.js';

export interface ServerConfig {
  /** Extra `host:port` values to accept in the Host header, besides loopback. */
  allowedHosts: string[];
  /**
   * The address people use (`serve --public-url`), an origin such as `https://team.example.com`:
   * requests addressed to it are served, cookie-carrying writes must come from it, cookies are
   * `Secure` when it is https, and no secret is put in a URL. Unset, the server is this machine's.
   */
  publicUrl?: string;
  /** Proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`--trust-proxy`). */
  trustProxy?: string[];
  /** Lets the `sessiondesk` CLI reach a running server; unset, the admin routes do not exist. */
  adminToken?: string;
  /**
   * The launch token (`serve` prints it in its URL; the desktop window loads it): first-run
   * setup and the demo's sign-in need it. Unset, neither can be done over HTTP.
   */
  launchToken?: string;
  /** The built dashboard (index.html and assets); unset or missing, a placeholder page. */
  rendererDir?: string;
  /** Bytes of answers kept for repeated reads (sessions and list pages); 80 MiB when unset, 0 for none. */
  cacheBytes?: number;
  /** How long a request body may take to arrive (408 after); 30 s when unset. */
  bodyTimeoutMs?: number;
  /** Connections open at once; 1024 when unset. */
  maxConnections?: number;
  /** How long an event stream may stay open before the client must reconnect; 1 hour when unset. */
  eventStreamMaxMs?: number;
  /** How long one search may run before it is stopped and answered 503; 5 s when unset. */
  searchTimeLimitMs?: number | undefined;
  /** Sign-in through an OpenID Connect provider (`serve --oidc-issuer`); unset, none. */
  identityProvider?: { provider: IdentityProvider; allowedDomains: readonly string[] };
  /** Whether email and password sign in (`serve --password-sign-in`); true when unset. */
  passwordSignIn?: boolean;
}

/** What every route plugin receives: the app's dependencies, built once in buildApp. */
export interface AppContext {
  /**
   * The desktop's sql.js store, for what works on it alone so far (search, export,
   * backup, the admin directory); null on a team server (PostgreSQL). See `localStore`.
   */
  store: Store | null;
  /** What is local to this server process: sandboxes, `server.json`, the search index. */
  dataDir: string;
  /** The repositories as every database answers them: what routes move to. */
  storage: Storage;
  /** Sessions' transcripts, read by byte offset on either database. */
  transcripts: TranscriptSource;
  accounts: Accounts;
  clock: Clock;
  logger: Logger;
  config: ServerConfig;
  auth: Authenticator;
  /** Who presented the launch token: only they may set up or sign in to the demo. */
  launch: LaunchGate;
  /** How cookies are set: `Secure` when the public URL is https. */
  cookies: CookieSecurity;
  /** Who may see which workspace and session: the one place every route asks. */
  access: Access;
  /** Routes that end a credential say so here; open streams check theirs again. */
  credentialChanges: CredentialChanges;
  events: EventBus;
  sessions: SessionService;
  /** Create, update, follow up, review and stop: one call each, the service and the agents in order. */
  sessionCommands: SessionCommands;
  /** Sessions' changes, computed from their sandboxes on request. */
  changes: SessionChanges;
  /** The full-text index of every transcript (FTS5 beside sql.js, or PostgreSQL), and search over it. */
  searchIndex: TranscriptIndex;
  search: SearchService;
  agents: AgentHost;
  /** What agents ask before they act, waiting for a decision. */
  approvals: Approvals;
  /** Imported sessions whose files a run of ours is writing: imports leave them alone. */
  historyHolds: ReadonlySet<string>;
  /** The environment agent CLIs are looked up in and run with. */
  agentEnv: NodeJS.ProcessEnv;
  /** Full sessions as response bytes, and list pages (without their stats) as JSON text. */
  caches: { sessions: ResponseCache<Buffer>; lists: ResponseCache<ListPageText> };
  signInThrottle: SignInThrottle;
  /** Sign-ins through the identity provider; null when the server has none. */
  signInFlows: SignInFlows | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The caller, as set by the route's onRequest authentication. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route has no authentication hook');
  return request.principal;
}

export function userOf(request: FastifyRequest): Extract<Principal, { kind: 'user' }> {
  const principal = principalOf(request);
  if (principal.kind !== 'user') throw new Error('route expects a signed-in user');
  return principal;
}

/** The answer for what works on a desktop's data directory alone so far: 503, saying so. */
export function notOnTeamServer(what: string): AppError {
  return new AppError(
    503,
    'unavailable',
    `${what} is not available on a team server (PostgreSQL) yet; it works on a desktop's data directory.`,
  );
}

/** The sql.js store, for a route that works on it alone so far; on a team server, 503. */
export function localStore(ctx: AppContext, what: string): Store {
  if (!ctx.store) throw notOnTeamServer(what);
  return ctx.store;
}
