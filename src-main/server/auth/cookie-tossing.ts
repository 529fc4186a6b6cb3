import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../../src-shared/constants.js';
import { sessionCookieCount } from './authenticate.js';

/**
 * Refuses a request that carries two `__session` cookies, as two Host lines are refused: one
 * of them was set by someone else (any page on another port of this host can), and using
 * either would sign the user out or in as the other. Both are cleared, on every path the
 * foreign one may have been set for (a prefix of this request's path), so a new sign-in works.
 */
export async function refuseDuplicateSessionCookies(request: FastifyRequest, reply: FastifyReply) {
  if (sessionCookieCount(request) < 2) return;
  const path = (request.url.split('?')[0] ?? '/').split('/').filter(Boolean);
  const paths = ['/', ...path.slice(0, 8).map((_, i) => `/${path.slice(0, i + 1).join('/')}`)];
  for (const cookiePath of paths) reply.clearCookie(SESSION_COOKIE, { path: cookiePath });
  return reply.code(400).send({
    error: {
      code: 'bad_request',
      message:
        'Two __session cookies were sent (another site on this machine may have set one); both are cleared: sign in again',
    },
  });
}
