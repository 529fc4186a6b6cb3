import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LAUNCH_COOKIE } from '../../../src-shared/constants.js';
import { hashSecret } from '../../accounts/secrets.js';
import { forbidden } from '../../errors.js';
import { requireSameOrigin } from './localhost-guard.js';

/**
 * Whoever can reach the port is not yet the person who started the server. That person
 * gets a launch token (256 random bits, new at every start, kept only in this process's
 * memory): `serve` prints it in its URL, the desktop app puts it in the URL its window
 * loads. The dashboard trades it once for an HttpOnly cookie of this browser session and
 * drops it from the address bar; first-run setup and the demo's sign-in need that cookie.
 */
export function newLaunchToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The dashboard's address with the token, as `serve` prints it and the desktop window loads it. */
export function withLaunchToken(url: string, token: string): string {
  const withToken = new URL(url);
  withToken.searchParams.set('token', token);
  return withToken.href;
}

export const LAUNCH_COOKIE_OPTIONS = { path: '/', httpOnly: true, sameSite: 'strict' } as const;

const NEEDS_TOKEN =
  'This needs the link that started Session Desk: open the URL "sessiondesk serve" printed ' +
  '(it ends in ?token=…), or use the desktop app.';

export interface LaunchGate {
  /** Whether a token presented to the exchange is this server's. */
  matches(token: string): boolean;
  /** Whether the request carries the cookie the exchange set (any one of them, if tossed). */
  holds(request: FastifyRequest): boolean;
  /** Sets the cookie after a successful exchange. */
  grant(reply: FastifyReply): void;
  /** onRequest hook: a same-origin request holding the cookie, else 403 saying what to open. */
  required: { onRequest: (request: FastifyRequest) => Promise<void> };
}

/** Without a token (a server built without one), nothing holds it: setup stays closed. */
export function createLaunchGate(token: string | undefined): LaunchGate {
  // Hashes of equal length are compared, never the secrets themselves.
  const expected = token === undefined ? null : Buffer.from(hashSecret(token), 'hex');
  const matches = (candidate: string) =>
    expected !== null && timingSafeEqual(Buffer.from(hashSecret(candidate), 'hex'), expected);

  function holds(request: FastifyRequest): boolean {
    const raw = request.raw.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]?.toLowerCase() !== 'cookie') continue;
      for (const pair of (raw[i + 1] ?? '').split(';')) {
        const eq = pair.indexOf('=');
        if (eq === -1 || pair.slice(0, eq).trim() !== LAUNCH_COOKIE) continue;
        if (matches(pair.slice(eq + 1).trim())) return true;
      }
    }
    return false;
  }

  return {
    matches,
    holds,
    grant(reply) {
      if (token !== undefined) reply.setCookie(LAUNCH_COOKIE, token, LAUNCH_COOKIE_OPTIONS);
    },
    required: {
      onRequest: async (request) => {
        if (!holds(request)) throw forbidden(NEEDS_TOKEN);
        requireSameOrigin(request);
      },
    },
  };
}
