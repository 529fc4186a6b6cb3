import type { FastifyRequest } from 'fastify';
import { API_KEY_PATTERN } from '../../../src-shared/ids.js';
import { SESSION_COOKIE } from '../../../src-shared/constants.js';
import { hashSecret } from '../../accounts/secrets.js';
import type { Clock, Logger } from '../../clock.js';
import { AppError, unauthorized } from '../../errors.js';
import type { Storage } from '../../store/storage.js';
import { clientKey, isCrossSite, type FailureLimiter } from './rate-limit.js';
import { requireSameOrigin } from './localhost-guard.js';

export type Principal =
  | { kind: 'apiKey'; keyId: string; workspaceId: string; pushOnly?: true }
  | { kind: 'user'; userId: string; tokenHash: string };

/** How long a sign-in lasts: at most 30 days, and 7 days without any request. */
export const SESSION_ABSOLUTE_MS = 30 * 24 * 60 * 60 * 1000;
export const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** Last-used times are kept to the minute, so reads do not each cost a durable write. */
const TOUCH_EVERY_MS = 60 * 1000;

/**
 * The API key of a request, from whichever of the three places it was sent. The same key
 * twice is fine; two different keys, an empty value or a malformed header are refused.
 */
export function presentedApiKey(request: FastifyRequest): string | null {
  const found: string[] = [];
  const header = request.headers['x-api-key'];
  if (header !== undefined) {
    if (Array.isArray(header)) found.push(...header);
    else found.push(header);
  }
  const query = (request.query as Record<string, unknown> | undefined)?.apiKey;
  if (query !== undefined) {
    if (Array.isArray(query)) found.push(...query.map(String));
    else found.push(String(query));
  }
  // Node keeps only the first of several Authorization lines: read them all, so that two
  // different ones are refused like any other pair of keys.
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== 'authorization') continue;
    const match = /^Bearer(?: +(.*))?$/iu.exec((raw[i + 1] ?? '').trim());
    if (!match) throw unauthorized('The Authorization header must be "Bearer <API key>"');
    found.push(match[1]?.trim() ?? '');
  }
  if (found.length === 0) return null;
  if (found.some((k) => k.trim() === '')) throw unauthorized('An empty API key was sent');
  if (new Set(found).size > 1) throw unauthorized('Two different API keys were sent in one request');
  return found[0] as string;
}

/**
 * How many `__session` cookies the request carries. A page on another port of this host can
 * set one of its own (cookies do not isolate ports), with a longer path so that it is sent
 * first: the server must not pick one of two.
 */
export function sessionCookieCount(request: FastifyRequest): number {
  return cookieCount(request, SESSION_COOKIE);
}

/** How many cookies of that name the request carries (Fastify's parser keeps only one). */
export function cookieCount(request: FastifyRequest, name: string): number {
  let count = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== 'cookie') continue;
    for (const pair of (raw[i + 1] ?? '').split(';')) {
      if (pair.split('=')[0]?.trim() === name) count += 1;
    }
  }
  return count;
}

export function sessionToken(request: FastifyRequest): string | null {
  const token = request.cookies[SESSION_COOKIE];
  return token === undefined || token === '' ? null : token;
}

/** The security requirements of the OpenAPI document, by the scheme names declared in app.ts. */
export type SecurityRequirement = Record<string, string[]>;

const KEY_OR_COOKIE: SecurityRequirement[] = [
  { apiKeyHeader: [] },
  { apiKeyQuery: [] },
  { bearer: [] },
  { sessionCookie: [] },
];
const COOKIE_ONLY: SecurityRequirement[] = [{ sessionCookie: [] }];
const KEY_ONLY: SecurityRequirement[] = [{ apiKeyHeader: [] }, { apiKeyQuery: [] }, { bearer: [] }];

/** What each authentication hook accepts, read when routes are added to describe them. */
const acceptedBy = new WeakMap<object, SecurityRequirement[]>();

/** The credentials a route's onRequest hooks accept, as OpenAPI `security`; undefined for none. */
export function routeSecurity(onRequest: unknown): SecurityRequirement[] | undefined {
  const hooks: unknown[] = Array.isArray(onRequest) ? onRequest : [onRequest];
  for (const hook of hooks) {
    const security = typeof hook === 'function' ? acceptedBy.get(hook) : undefined;
    if (security) return security;
  }
  return undefined;
}

/** onRequest hooks that authenticate before the body is read or validated. */
export function authHooks(auth: Authenticator) {
  const either = async (request: FastifyRequest) => {
    request.principal = await auth.either(request);
  };
  const userOnly = async (request: FastifyRequest) => {
    request.principal = await auth.userOnly(request);
  };
  const pushKey = async (request: FastifyRequest) => {
    request.principal = await auth.pushKey(request);
  };
  // What a key may never ask even in the dashboard's place (to start a program): forbidden, 403.
  const userOnlyKeysForbidden = async (request: FastifyRequest) => {
    if (presentedApiKey(request) !== null) {
      throw new AppError(
        403,
        'api_key_not_allowed',
        'This endpoint is for a signed-in owner (the dashboard); an API key may never use it',
      );
    }
    request.principal = await auth.userOnly(request);
  };
  acceptedBy.set(either, KEY_OR_COOKIE);
  acceptedBy.set(userOnly, COOKIE_ONLY);
  acceptedBy.set(pushKey, KEY_ONLY);
  acceptedBy.set(userOnlyKeysForbidden, COOKIE_ONLY);
  return {
    either: { onRequest: either },
    userOnly: { onRequest: userOnly },
    pushKey: { onRequest: pushKey },
    userOnlyKeysForbidden: { onRequest: userOnlyKeysForbidden },
  };
}

export interface Authenticator {
  /** List, get, update: an API key, or else the sign-in cookie. A push-only key is a 403. */
  either(request: FastifyRequest): Promise<Principal>;
  /** A desktop's push: an API key only, of either scope. */
  pushKey(request: FastifyRequest): Promise<Extract<Principal, { kind: 'apiKey' }>>;
  /** Create, follow-ups, account pages: only the sign-in cookie; an API key is a 400. */
  userOnly(request: FastifyRequest): Promise<Extract<Principal, { kind: 'user' }>>;
  /** The cookie's sign-in, or null; never throws for a missing one. */
  optionalUser(request: FastifyRequest): Promise<Extract<Principal, { kind: 'user' }> | null>;
  /** Whether a principal let in earlier is still good: key not revoked, sign-in not ended. */
  stillValid(principal: Principal): Promise<boolean>;
}

export function createAuthenticator(deps: {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  badKeyLimiter: FailureLimiter;
}): Authenticator {
  const { clock, badKeyLimiter } = deps;
  const { repos } = deps.storage;

  /** Bookkeeping writes are not awaited: a request never waits on them. */
  function background(what: string, write: Parameters<Storage['write']>[0]): void {
    deps.storage.write(write).catch((err: unknown) => {
      deps.logger.warn(`Could not record ${what}: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  async function checkKey(
    request: FastifyRequest,
    key: string,
  ): Promise<Extract<Principal, { kind: 'apiKey' }>> {
    const record = API_KEY_PATTERN.test(key) ? await repos.apiKeys.findByHash(hashSecret(key)) : null;
    // A valid key is never refused for others' bad keys: only bad keys are limited.
    if (!record || record.revokedAt) {
      const client = clientKey(request.ip);
      const wait = await badKeyLimiter.retryAfter(client);
      if (wait > 0) {
        throw new AppError(429, 'rate_limited', 'Too many invalid API keys; try again later', undefined, {
          'retry-after': String(wait),
        });
      }
      if (!isCrossSite(request.headers)) await badKeyLimiter.fail(client);
      throw unauthorized('Invalid API key');
    }
    const now = clock.now();
    if (!record.lastUsedAt || now.getTime() - Date.parse(record.lastUsedAt) >= TOUCH_EVERY_MS) {
      background('when an API key was used', (tx) => tx.apiKeys.touch(record.id, now.toISOString()));
    }
    return {
      kind: 'apiKey',
      keyId: record.id,
      workspaceId: record.workspaceId,
      ...(record.pushOnly ? { pushOnly: true as const } : {}),
    };
  }

  async function checkCookie(request: FastifyRequest): Promise<Extract<Principal, { kind: 'user' }> | null> {
    const token = sessionToken(request);
    if (token === null) return null;
    const tokenHash = hashSecret(token);
    const session = await repos.authSessions.find(tokenHash);
    const now = clock.now().getTime();
    if (
      !session ||
      Date.parse(session.expiresAt) <= now ||
      Date.parse(session.lastSeenAt) + SESSION_IDLE_MS <= now
    ) {
      return null;
    }
    if (now - Date.parse(session.lastSeenAt) >= TOUCH_EVERY_MS) {
      background('sign-in activity', (tx) => tx.authSessions.touch(tokenHash, new Date(now).toISOString()));
    }
    return { kind: 'user', userId: session.userId, tokenHash };
  }

  /** `keyAccepted`: the route takes an API key too, so the message says how to send one. */
  async function user(
    request: FastifyRequest,
    keyAccepted: boolean,
  ): Promise<Extract<Principal, { kind: 'user' }>> {
    const principal = await checkCookie(request);
    if (!principal) {
      throw unauthorized(
        sessionToken(request) !== null
          ? 'Your sign-in has expired; sign in again'
          : keyAccepted
            ? 'Sign in first, or send an API key (x-api-key header, Authorization: Bearer, or apiKey in the query)'
            : 'Sign in first: this needs a signed-in user (an API key is not enough)',
      );
    }
    requireSameOrigin(request);
    return principal;
  }

  return {
    async either(request) {
      const key = presentedApiKey(request);
      if (key === null) return user(request, true);
      const principal = await checkKey(request, key);
      if (principal.pushOnly) {
        throw new AppError(
          403,
          'forbidden',
          "This API key may only push a desktop's sessions (sessiondesk push); use a key made without " +
            '--push-only, or sign in, for anything else',
        );
      }
      return principal;
    },
    async pushKey(request) {
      const key = presentedApiKey(request);
      if (key === null) {
        throw unauthorized(
          'Send an API key (x-api-key header, Authorization: Bearer, or apiKey in the query)',
        );
      }
      return checkKey(request, key);
    },
    async userOnly(request) {
      if (presentedApiKey(request) !== null) {
        throw new AppError(
          400,
          'api_key_not_allowed',
          'This endpoint needs a signed-in user (the dashboard); API keys cannot be used for it',
        );
      }
      return user(request, false);
    },
    async optionalUser(request) {
      return checkCookie(request);
    },
    async stillValid(principal) {
      if (principal.kind === 'apiKey') return repos.apiKeys.isActive(principal.keyId);
      const session = await repos.authSessions.find(principal.tokenHash);
      const now = clock.now().getTime();
      return (
        session !== null &&
        Date.parse(session.expiresAt) > now &&
        Date.parse(session.lastSeenAt) + SESSION_IDLE_MS > now
      );
    },
  };
}
