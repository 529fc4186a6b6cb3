import { isAdministrator } from '../../accounts/administrator.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  LaunchBodySchema,
  MeResponseSchema,
  SignInBodySchema,
  SignInResponseSchema,
} from '../../../src-shared/accounts.js';
import { SESSION_COOKIE } from '../../../src-shared/constants.js';
import { AuthMethodsSchema, OIDC_START_PATH } from '../../../src-shared/sign-in.js';
import { hashSecret, newSessionToken, NO_PASSWORD, verifyPassword } from '../../accounts/secrets.js';
import { forbidden, unauthorized } from '../../errors.js';
import { requireSameOrigin } from '../auth/localhost-guard.js';
import { signInRefused } from '../auth/sign-in-throttle.js';
import { authHooks, SESSION_ABSOLUTE_MS, sessionToken } from '../auth/authenticate.js';
import { userOf, type AppContext } from '../context.js';
import { toldAlready } from '../errors.js';
import { errorResponses } from './error-responses.js';

/** The `__session` cookie: HttpOnly, SameSite=Strict, and Secure when the public URL is https. */
export function sessionCookieOptions(ctx: Pick<AppContext, 'cookies'>) {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure: ctx.cookies.secure } as const;
}

export function authRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { signInThrottle, storage } = ctx;
  const { repos } = storage;
  const api = app.withTypeProvider<ZodTypeProvider>();

  const passwordSignIn = ctx.config.passwordSignIn !== false;

  api.get(
    '/api/auth/methods',
    {
      schema: {
        summary: 'How to sign in here',
        description:
          'Unauthenticated: whether email and password sign in, and the identity provider, if the server has one. The sign-in page offers exactly these.',
        tags: ['auth'],
        response: { 200: AuthMethodsSchema },
      },
    },
    async () => ({
      password: passwordSignIn,
      teamServer: ctx.store === null,
      ...(ctx.signInFlows
        ? { identityProvider: { name: ctx.signInFlows.providerName, startUrl: OIDC_START_PATH } }
        : {}),
    }),
  );

  api.post(
    '/api/auth/sign-in',
    {
      schema: {
        summary: 'Sign in',
        description:
          'Checks the email and password and sets the `__session` cookie (HttpOnly, SameSite=Strict). Failed attempts are limited per account and client (docs/reference/security.md). 403 when the server signs people in through its identity provider only (`serve --password-sign-in off`).',
        tags: ['auth'],
        body: SignInBodySchema,
        response: { 200: SignInResponseSchema, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      if (!passwordSignIn) {
        const provider = ctx.signInFlows?.providerName ?? 'the identity provider';
        throw forbidden(
          `Password sign-in is off on this server: sign in with ${provider} (${OIDC_START_PATH}).`,
        );
      }
      const email = request.body.email.trim().toLowerCase();
      const refusal = await signInThrottle.refusal(email, request.ip);
      if (refusal) {
        ctx.logger.warn(`sign-in refused for ${email}: too many failed attempts, ${refusal.wait} s to wait`, {
          event: 'sign-in.limited',
          email,
          client: request.ip,
          limit: refusal.limit,
          retryAfter: refusal.wait,
        });
        throw toldAlready(signInRefused(refusal));
      }

      const user = await repos.users.findByEmail(email);
      // Unknown email and wrong password take the same path and the same time. At debug level
      // each check says when its scrypt starts and ends: one at a time, never two at once.
      const ok = await verifyPassword(request.body.password, user?.passwordHash ?? null, {
        started: () =>
          ctx.logger.debug?.('password check: scrypt started', { event: 'password-check.started' }),
        ended: () => ctx.logger.debug?.('password check: scrypt ended', { event: 'password-check.ended' }),
      });
      if (!ok || !user) {
        await signInThrottle.failed(email, request.ip);
        // Which of the two was wrong is the server's to know, not the caller's.
        const why = !user
          ? 'no such account'
          : user.passwordHash === NO_PASSWORD
            ? 'the account has no password (it signs in through the identity provider)'
            : 'wrong password';
        ctx.logger.info(`sign-in failed for ${email}: ${why}`, {
          event: 'sign-in.failed',
          email,
          client: request.ip,
        });
        throw toldAlready(unauthorized('Wrong email or password'));
      }
      await signInThrottle.succeeded(email, request.ip);
      await startSignIn(ctx, reply, user.id);
      return { user: publicUser(user) };
    },
  );

  api.post(
    '/api/auth/launch',
    {
      schema: {
        summary: 'Present the launch token',
        description:
          'The token in the URL `serve` printed (or the desktop window loaded), traded for the `__launch` cookie (HttpOnly, SameSite=Strict, for this browser session) that first-run setup and the demo sign-in need. A wrong token is a 403.',
        tags: ['auth'],
        body: LaunchBodySchema,
        response: { 204: z.null(), ...errorResponses(400, 403, 413, 415, 500) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(request);
      if (!(await ctx.launch.matches(request.body.token))) {
        throw forbidden(
          ctx.launch.kind === 'code'
            ? 'This is not a setup code of this server: type the code "sessiondesk serve" printed on its terminal when it last started.'
            : 'This is not the token of this server: open the URL "sessiondesk serve" printed when it last started.',
        );
      }
      ctx.launch.grant(reply, request.body.token);
      return reply.code(204).send(null);
    },
  );

  api.post(
    '/api/auth/sign-out',
    {
      schema: {
        summary: 'Sign out',
        description:
          'Ends the sign-in on the server and clears the cookie. Answers 204 even when already signed out.',
        tags: ['auth'],
        response: { 204: z.null(), ...errorResponses(403, 500, 503) },
      },
    },
    async (request, reply: FastifyReply) => {
      const token = sessionToken(request);
      if (token !== null) {
        const tokenHash = hashSecret(token);
        if (await repos.authSessions.find(tokenHash)) {
          await storage.write((tx) => tx.authSessions.delete(tokenHash));
          await ctx.credentialChanges.notify();
        }
      }
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(ctx));
      return reply.code(204).send();
    },
  );

  api.get(
    '/api/auth/me',
    {
      ...authHooks(ctx.auth).userOnly,
      // Signed out is an answer here: the dashboard asks at every load to know whom to show.
      config: { expectedRefusals: [401] },
      schema: {
        summary: 'The signed-in user',
        description: 'The user behind the `__session` cookie and the workspaces they belong to.',
        tags: ['auth'],
        response: { 200: MeResponseSchema, ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const user = await repos.users.findById(userOf(request).userId);
      if (!user) throw unauthorized('Your account no longer exists');
      return {
        user: publicUser(user),
        workspaces: await repos.workspaces.listForUser(user.id),
        administrator: await isAdministrator(repos, user.id),
        teamServer: ctx.store === null,
      };
    },
  );
}

/** Issues a new sign-in token (never reusing one: no fixation) and sets the cookie. */
export async function startSignIn(ctx: AppContext, reply: FastifyReply, userId: string): Promise<void> {
  const token = newSessionToken();
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await ctx.storage.write(async (tx) => {
    await tx.authSessions.deleteExpired(now.toISOString());
    await tx.authSessions.insert(hashSecret(token), {
      userId,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: expiresAt.toISOString(),
    });
  });
  reply.setCookie(SESSION_COOKIE, token, { ...sessionCookieOptions(ctx), expires: expiresAt });
}

export function publicUser(user: { id: string; email: string; name: string; imageUrl?: string }) {
  const visible: z.infer<typeof SignInResponseSchema>['user'] = {
    id: user.id,
    email: user.email,
    name: user.name,
  };
  if (user.imageUrl !== undefined) visible.imageUrl = user.imageUrl;
  return visible;
}
