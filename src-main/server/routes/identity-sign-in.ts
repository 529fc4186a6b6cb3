import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  OIDC_CALLBACK_PATH,
  OIDC_START_PATH,
  ReturnToSchema,
  SIGN_IN_ERROR_PARAM,
  type SignInErrorCode,
} from '../../../src-shared/sign-in.js';
import { SignInRefused } from '../../identity/provider.js';
import { FLOW_LIFETIME_MS } from '../../identity/sign-in-flows.js';
import { cookieCount } from '../auth/authenticate.js';
import { ownOrigin } from '../auth/localhost-guard.js';
import type { AppContext } from '../context.js';
import { startSignIn } from './auth.js';

/**
 * Sign-in through the identity provider (`serve --oidc-issuer`): two browser navigations, so
 * every answer is a redirect, never a JSON page. A refused sign-in lands on the dashboard's
 * sign-in page with `?signInError=CODE`, which it puts in words; the details are in the log.
 */
export function identitySignInRoutes(app: FastifyInstance, ctx: AppContext): void {
  const flows = ctx.signInFlows;
  if (!flows) return;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const secure = ctx.config.publicUrl?.startsWith('https://') === true;
  // Over https the cookie is `__Host-`: only this host may set it, over https, for every path.
  const cookieName = secure ? '__Host-sign_in' : '__sign_in';
  // Lax, not Strict: the browser must send it when the provider sends it back here, a
  // navigation that another site started.
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax', secure } as const;
  const redirected = {
    303: z.null().describe('A redirect (`Location`): this route is navigated to, not fetched.'),
  };

  const redirectUri = (request: FastifyRequest) =>
    `${ctx.config.publicUrl ?? ownOrigin(request)}${OIDC_CALLBACK_PATH}`;

  /**
   * A refusal, or anything else that went wrong (the database down, say): the browser is sent
   * to the sign-in page either way, never left on an error's JSON. The log says what it was.
   */
  function refused(request: FastifyRequest, reply: FastifyReply, err: unknown) {
    if (err instanceof SignInRefused) {
      ctx.logger.info(`sign-in through ${flows!.providerName} refused: ${err.detail}`, {
        event: 'sign-in.refused',
        reason: err.code,
      });
      return reply.redirect(signInPage(err.code), 303);
    }
    const message = err instanceof Error ? err.message : String(err);
    ctx.logger.error(`sign-in through ${flows!.providerName} failed (request ${request.id}): ${message}`, {
      event: 'request.failed',
      requestId: request.id,
    });
    return reply.redirect(signInPage('failed'), 303);
  }

  api.get(
    OIDC_START_PATH,
    {
      schema: {
        summary: 'Sign in through the identity provider',
        description: `Navigated to, not fetched: redirects the browser to the provider (authorization code with PKCE, state and nonce; scope \`openid email profile\`), with a cookie of this sign-in (HttpOnly, SameSite=Lax, ${FLOW_LIFETIME_MS / 60_000} minutes). \`returnTo\`: the dashboard's path to land on afterwards (a path of this server only).`,
        tags: ['auth'],
        querystring: z.object({ returnTo: z.string().optional() }),
        response: redirected,
      },
    },
    async (request, reply) => {
      const returnTo = ReturnToSchema.safeParse(request.query.returnTo ?? '/');
      if (!returnTo.success) return reply.redirect(signInPage('bad_return_to'), 303);
      try {
        const started = await flows.start({ redirectUri: redirectUri(request), returnTo: returnTo.data });
        reply.setCookie(cookieName, started.handle, { ...cookieOptions, maxAge: FLOW_LIFETIME_MS / 1000 });
        return reply.redirect(started.authorizationUrl, 303);
      } catch (err) {
        return refused(request, reply, err);
      }
    },
  );

  api.get(
    OIDC_CALLBACK_PATH,
    {
      schema: {
        summary: "The identity provider's answer",
        description:
          'Where the provider sends the browser back (register `<public URL>/api/auth/oidc/callback` as its redirect URI). Checks the answer against the sign-in this browser started (once: a second answer is refused), exchanges the code, verifies the ID token, sets the `__session` cookie and redirects to the dashboard; a refusal redirects to the sign-in page with `?signInError=CODE`.',
        tags: ['auth'],
        response: redirected,
      },
    },
    async (request, reply) => {
      reply.clearCookie(cookieName, cookieOptions);
      const at = request.url.indexOf('?');
      const query = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
      try {
        // Two of them: one was set by someone else (a page on any port of this host can), to
        // have this browser signed in as them.
        if (cookieCount(request, cookieName) > 1) {
          throw new SignInRefused('state_mismatch', `two ${cookieName} cookies were sent: neither is used`);
        }
        const handle = request.cookies[cookieName];
        const signedIn = await flows.finish({ handle, query });
        await startSignIn(ctx, reply, signedIn.userId);
        return reply.redirect(signedIn.returnTo, 303);
      } catch (err) {
        return refused(request, reply, err);
      }
    },
  );
}

/** The dashboard's sign-in page, saying why the sign-in was refused. */
function signInPage(code: SignInErrorCode): string {
  return `/?${SIGN_IN_ERROR_PARAM}=${code}`;
}
