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
import { hashSecret, newSessionToken, verifyPassword } from '../../accounts/secrets.js';
import { AppError, forbidden, unauthorized } from '../../errors.js';
import { requireSameOrigin } from '../auth/localhost-guard.js';
import { authHooks, SESSION_ABSOLUTE_MS, sessionToken } from '../auth/authenticate.js';
import { userOf, type AppContext } from '../context.js';
import { toldAlready } from '../errors.js';
import { errorResponses } from './error-responses.js';

/** The `__session` cookie: HttpOnly, SameSite=Strict, and Secure when the public URL is https. */
export function sessionCookieOptions(ctx: Pick<AppContext, 'cookies'>) {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure: ctx.cookies.secure } as const;
}

function rateLimited(seconds: number): AppError {
  return new AppError(429, 'rate_limited', 'Too many failed sign-ins; try again later', undefined, {
    'retry-after': String(seconds),
  });
}

export function authRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { signInLimits, storage } = ctx;
  const { repos } = storage;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post(
    '/api/auth/sign-in',
    {
      schema: {
        summary: 'Sign in',
        description:
          'Checks the email and password and sets the `__session` cookie (HttpOnly, SameSite=Strict). Failed attempts are limited per account.',
        tags: ['auth'],
        body: SignInBodySchema,
        response: { 200: SignInResponseSchema, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      // Keyed by account only: every client is this machine, so a limit per client would let
      // one program lock every account out.
      const wait = await signInLimits.perAccount.retryAfter(email);
      if (wait > 0) {
        ctx.logger.warn(`sign-in refused for ${email}: too many failed attempts, ${wait} s to wait`, {
          event: 'sign-in.limited',
          email,
          client: request.ip,
          retryAfter: wait,
        });
        throw toldAlready(rateLimited(wait));
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
        await signInLimits.perAccount.fail(email);
        // Which of the two was wrong is the server's to know, not the caller's.
        ctx.logger.info(`sign-in failed for ${email}: ${user ? 'wrong password' : 'no such account'}`, {
          event: 'sign-in.failed',
          email,
          client: request.ip,
        });
        throw toldAlready(unauthorized('Wrong email or password'));
      }
      await signInLimits.perAccount.reset(email);
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
          ctx.credentialChanges.notify();
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
