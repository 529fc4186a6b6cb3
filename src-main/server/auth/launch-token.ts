import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LAUNCH_COOKIE } from '../../../src-shared/constants.js';
import type { Clock } from '../../clock.js';
import { hashSecret } from '../../accounts/secrets.js';
import { forbidden } from '../../errors.js';
import { requireSameOrigin } from './localhost-guard.js';
import { normalizeSetupCode, setupCodeHash, type SetupCodes } from './setup-code.js';

/**
 * Whoever can reach the port is not yet the person who started the server. That person
 * gets a launch token (256 random bits, new at every start, kept only in this process's
 * memory): `serve` prints it in its URL, the desktop app puts it in the URL its window
 * loads. The dashboard trades it once for an HttpOnly cookie of this browser session and
 * drops it from the address bar; first-run setup and the demo's sign-in need that cookie.
 *
 * A server with a public URL puts no secret in a URL: it prints a setup code instead, which
 * is typed into the first-run page and traded for the same cookie (setup-code.ts).
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

export interface CookieSecurity {
  /** Whether cookies are `Secure`: the server's public URL is https. */
  secure: boolean;
}

export function launchCookieOptions({ secure }: CookieSecurity) {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure } as const;
}

const NEEDS_TOKEN =
  'This needs the link that started Session Desk: open the URL "sessiondesk serve" printed ' +
  '(it ends in ?token=…), or use the desktop app.';
const NEEDS_CODE =
  'This needs the setup code "sessiondesk serve" printed on its terminal when it started: ' +
  'type it in on the first-run page.';

export interface LaunchGate {
  /** What the person who started the server holds: the URL's token, or a typed setup code. */
  readonly kind: 'token' | 'code';
  /** Whether a token (or code) presented to the exchange is this server's. */
  matches(token: string): Promise<boolean>;
  /** Whether the request carries the cookie the exchange set (any one of them, if tossed). */
  holds(request: FastifyRequest): Promise<boolean>;
  /** Sets the cookie after a successful exchange of `token`. */
  grant(reply: FastifyReply, token: string): void;
  /** onRequest hook: a same-origin request holding the cookie, else 403 saying what to open. */
  required: { onRequest: (request: FastifyRequest) => Promise<void> };
}

/** Every `__launch` cookie value a request carries (a tossed cookie may come beside ours). */
function launchCookies(request: FastifyRequest): string[] {
  const values: string[] = [];
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== 'cookie') continue;
    for (const pair of (raw[i + 1] ?? '').split(';')) {
      const eq = pair.indexOf('=');
      if (eq !== -1 && pair.slice(0, eq).trim() === LAUNCH_COOKIE) values.push(pair.slice(eq + 1).trim());
    }
  }
  return values;
}

function gate(
  kind: LaunchGate['kind'],
  matches: (token: string) => Promise<boolean>,
  cookieValue: (token: string) => string,
  security: CookieSecurity,
): LaunchGate {
  async function holds(request: FastifyRequest): Promise<boolean> {
    for (const value of launchCookies(request)) if (await matches(value)) return true;
    return false;
  }
  return {
    kind,
    matches,
    holds,
    grant(reply, token) {
      reply.setCookie(LAUNCH_COOKIE, cookieValue(token), launchCookieOptions(security));
    },
    required: {
      onRequest: async (request) => {
        if (!(await holds(request))) throw forbidden(kind === 'code' ? NEEDS_CODE : NEEDS_TOKEN);
        requireSameOrigin(request);
      },
    },
  };
}

/** Without a token (a server built without one), nothing holds it: setup stays closed. */
export function createLaunchGate(
  token: string | undefined,
  security: CookieSecurity = { secure: false },
): LaunchGate {
  // Hashes of equal length are compared, never the secrets themselves.
  const expected = token === undefined ? null : Buffer.from(hashSecret(token), 'hex');
  const matches = async (candidate: string) =>
    expected !== null && timingSafeEqual(Buffer.from(hashSecret(candidate), 'hex'), expected);
  return gate('token', matches, (presented) => presented, security);
}

/** A public URL's gate: any unexpired code in `codes`, as typed, on whichever process. */
export function createSetupCodeGate(codes: SetupCodes, clock: Clock, security: CookieSecurity): LaunchGate {
  const matches = (typed: string) => codes.valid(setupCodeHash(typed), clock.now().getTime());
  return gate('code', matches, normalizeSetupCode, security);
}
