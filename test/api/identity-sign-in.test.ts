import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, cliIn, ok, seedOwner, signInAt, useSandbox, waitFor } from '../helpers/cli-extra.js';
import { newClientId, startTestProvider, type TestProvider } from '../helpers/identity-provider.js';
import { answerCallback, signInAtProvider, signInThrough, startSignIn } from '../helpers/identity-sign-in.js';
import { requireTools, skipWithReason } from '../helpers/require-tools.js';
import { databaseFor, TEST_BACKEND } from '../helpers/test-database.js';
import { opensslTool } from '../helpers/tools.js';

/**
 * Sign-in through an identity provider, over HTTP against real `sessiondesk serve` processes and
 * a real OpenID Connect provider (oidc-provider, over HTTPS with a CA of the test's own, which
 * `serve` trusts through NODE_EXTRA_CA_CERTS). On sql.js and, in the PostgreSQL pass, on a team
 * database.
 */

const sandbox = useSandbox();

const PEOPLE = {
  ivy: { email: 'ivy@invited.test', email_verified: true, name: 'Ivy Invited' },
  uma: { email: 'uma@elsewhere.test', email_verified: true, name: 'Uma Uninvited' },
  vic: { email: 'vic@invited.test', email_verified: false, name: 'Vic Unverified' },
  dan: { email: 'dan@allowed.test', email_verified: true },
};

// Each test starts a server and the provider's clients, and runs the command line several times.
describe(
  'signing in through the identity provider',
  { ...requireTools(opensslTool()), timeout: 90_000 },
  () => {
    let idp: TestProvider;
    beforeAll(async () => {
      idp = await startTestProvider({ people: PEOPLE });
    });
    afterAll(async () => idp?.stop());

    /**
     * A server with an owner and a workspace, its client registered at the provider (with a
     * secret, unless `publicClient`) for its callback.
     */
    async function serveWithProvider(
      options: {
        args?: string[];
        env?: NodeJS.ProcessEnv;
        publicClient?: boolean;
        provider?: TestProvider;
      } = {},
    ) {
      const provider = options.provider ?? idp;
      const dataDir = sandbox.dataDir();
      const owner = await seedOwner(dataDir);
      const clientId = newClientId();
      const secret = options.publicClient ? undefined : randomBytes(16).toString('hex');
      const oidcArgs = [
        '--oidc-issuer',
        provider.issuer,
        '--oidc-client-id',
        clientId,
        ...(options.args ?? []),
      ];
      const env = {
        NODE_EXTRA_CA_CERTS: provider.caFile,
        ...(secret === undefined ? {} : { SESSIONDESK_OIDC_CLIENT_SECRET: secret }),
        ...options.env,
      };
      const serve = await sandbox.serveWithEnv(['--port', '0', '--data-dir', dataDir, ...oidcArgs], env);
      await provider.registerClient({
        client_id: clientId,
        ...(secret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: secret }),
        redirect_uris: [`${serve.url}/api/auth/oidc/callback`],
      });
      const cli = cliIn(dataDir);
      const userCount = async () => (JSON.parse(await ok(cli('user', 'list', '--json'))) as unknown[]).length;
      return { serve, owner, dataDir, cli, userCount, oidcArgs, env };
    }

    async function me(url: string, cookie: string) {
      const response = await fetch(`${url}/api/auth/me`, { headers: { cookie } });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        user: { id: string; email: string; name: string };
        workspaces: { organizationId: string; role: string }[];
      };
    }

    it('an invited email signs in, gets an account without a password, and joins the workspace', async () => {
      const { serve, owner, cli, userCount } = await serveWithProvider();
      const told = `Sign-in through the identity provider ${new URL(idp.issuer).host}, or with a password.`;
      await waitFor(() => serve.stdout().includes(told), 'serve to say how people sign in');
      const invited = await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'IVY@invited.test'));
      expect(invited).toContain(`ivy@invited.test has no account yet: invited to ${owner.org}`);
      expect(await userCount()).toBe(1);

      const first = await signInThrough(serve.url, idp, 'ivy', '/sessions?status=active');
      expect(first.location).toBe('/sessions?status=active');
      expect(first.session).not.toBeNull();
      const signedIn = await me(serve.url, first.session!);
      expect(signedIn.user).toMatchObject({ email: 'ivy@invited.test', name: 'Ivy Invited' });
      expect(signedIn.workspaces).toEqual([
        expect.objectContaining({ organizationId: owner.org, role: 'member' }),
      ]);
      expect(await userCount()).toBe(2);

      // The invitation is taken up: the owner sees a member, no invitation.
      const ownerCookie = await signInAt(serve.url, owner.email);
      const members = (await (
        await fetch(`${serve.url}/api/workspaces/${owner.org}/members`, { headers: { cookie: ownerCookie } })
      ).json()) as { members: { email: string }[]; invitations: unknown[] };
      expect(members.members.map((m) => m.email)).toContain('ivy@invited.test');
      expect(members.invitations).toEqual([]);

      // No password signs in as it, until one is set with the command line.
      const withPassword = () =>
        fetch(`${serve.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: serve.url },
          body: JSON.stringify({ email: 'ivy@invited.test', password: PASSWORD }),
        });
      expect((await withPassword()).status).toBe(401);
      await ok(cli('user', 'set-password', '--email', 'ivy@invited.test', '--password', PASSWORD));
      expect((await withPassword()).status).toBe(200);

      // The next sign-in finds the same account, by the identity it is linked to.
      const again = await signInThrough(serve.url, idp, 'ivy');
      expect(again.location).toBe('/');
      expect((await me(serve.url, again.session!)).user.id).toBe(signedIn.user.id);

      // Another person at the provider given the same email is not let into Ivy's account.
      idp.people.set('ivy-again', { email: 'ivy@invited.test', email_verified: true, name: 'Not Ivy' });
      expect(await signInThrough(serve.url, idp, 'ivy-again')).toEqual({
        location: '/?signInError=linked_elsewhere',
        session: null,
      });
    });

    it('an email nobody invited is told to ask an owner, and no account is made', async () => {
      const { serve, userCount } = await serveWithProvider();
      const refused = await signInThrough(serve.url, idp, 'uma', '/settings/keys');
      expect(refused).toEqual({ location: '/?signInError=not_invited', session: null });
      expect(await userCount()).toBe(1);
      expect(serve.stderr()).toContain('uma@elsewhere.test: no account has this email');
    });

    it('an email the provider did not verify is refused, invited or not', async () => {
      const { serve, owner, cli, userCount } = await serveWithProvider();
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'vic@invited.test'));
      const refused = await signInThrough(serve.url, idp, 'vic');
      expect(refused).toEqual({ location: '/?signInError=email_unverified', session: null });
      expect(await userCount()).toBe(1);
    });

    it('an email of an allowed domain gets an account of its own, named after the email', async () => {
      const { serve, userCount } = await serveWithProvider({
        args: ['--oidc-allowed-domains', 'Other.test, allowed.test'],
      });
      const signedIn = await signInThrough(serve.url, idp, 'dan');
      const account = await me(serve.url, signedIn.session!);
      expect(account.user).toMatchObject({ email: 'dan@allowed.test', name: 'dan' });
      expect(account.workspaces).toEqual([]);
      expect(await userCount()).toBe(2);
      // The domain is the email's own: uma's is not among them.
      expect((await signInThrough(serve.url, idp, 'uma')).location).toBe('/?signInError=not_invited');
    });

    it("an answer with another state than the browser's is refused, and the sign-in cannot be finished after", async () => {
      const { serve, owner, cli } = await serveWithProvider();
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
      const started = await startSignIn(serve.url);
      const callback = new URL(await signInAtProvider(idp, started.authorizationUrl, 'ivy'));
      const forged = new URL(callback);
      forged.searchParams.set('state', 'not-the-state-this-browser-was-sent-with');
      expect(await answerCallback(forged.href, started.cookie)).toEqual({
        location: '/?signInError=state_mismatch',
        session: null,
      });
      // The sign-in was used up by that answer: the real one finds nothing to finish.
      expect(await answerCallback(callback.href, started.cookie)).toEqual({
        location: '/?signInError=expired',
        session: null,
      });
      // Without the browser's cookie, an answer belongs to no sign-in.
      const other = await startSignIn(serve.url);
      const answer = await signInAtProvider(idp, other.authorizationUrl, 'ivy');
      expect(await answerCallback(answer, null)).toEqual({
        location: '/?signInError=expired',
        session: null,
      });
    });

    it('an answer brought back twice signs in once; its code and state are kept out of the log', async () => {
      const { serve, owner, cli } = await serveWithProvider({ args: ['--log-level', 'debug'] });
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
      const started = await startSignIn(serve.url);
      const callback = await signInAtProvider(idp, started.authorizationUrl, 'ivy');
      const { code, state } = Object.fromEntries(new URL(callback).searchParams) as Record<string, string>;
      expect((await answerCallback(callback, started.cookie)).session).not.toBeNull();
      expect(await answerCallback(callback, started.cookie)).toEqual({
        location: '/?signInError=expired',
        session: null,
      });
      // With the cookie of a new sign-in, the old answer's state is not that sign-in's.
      const fresh = await startSignIn(serve.url);
      expect(await answerCallback(callback, fresh.cookie)).toEqual({
        location: '/?signInError=state_mismatch',
        session: null,
      });
      await waitFor(
        () => serve.stderr().includes('/api/auth/oidc/callback?code=[redacted]'),
        'the request lines',
      );
      expect(serve.stderr()).not.toContain(code!);
      expect(serve.stderr()).not.toContain(state!);
    });

    it('a code the provider made for another client is refused, and signs nobody in', async () => {
      const { serve, owner, cli } = await serveWithProvider();
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
      // Another application registered at the same provider, even with our redirect URI.
      const otherClient = newClientId('other-app');
      await idp.registerClient({
        client_id: otherClient,
        client_secret: randomBytes(16).toString('hex'),
        redirect_uris: [`${serve.url}/api/auth/oidc/callback`],
      });
      const started = await startSignIn(serve.url);
      const forOther = new URL(started.authorizationUrl);
      forOther.searchParams.set('client_id', otherClient);
      const callback = await signInAtProvider(idp, forOther.href, 'ivy');
      const answer = await answerCallback(callback, started.cookie);
      expect(answer).toEqual({ location: '/?signInError=provider_error', session: null });
      expect(serve.stderr()).toMatch(/refused the code \(\d+ invalid_grant/u);
    });

    it('a public client (no secret) signs in with PKCE alone', async () => {
      const { serve, owner, cli } = await serveWithProvider({ publicClient: true });
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
      const start = await startSignIn(serve.url);
      const asked = new URL(start.authorizationUrl).searchParams;
      expect(
        Object.fromEntries(['response_type', 'scope', 'code_challenge_method'].map((k) => [k, asked.get(k)])),
      ).toEqual({
        response_type: 'code',
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      });
      expect(asked.get('nonce')).toBeTruthy();
      const answer = await answerCallback(
        await signInAtProvider(idp, start.authorizationUrl, 'ivy'),
        start.cookie,
      );
      expect((await me(serve.url, answer.session!)).user.email).toBe('ivy@invited.test');
    });

    it('reads the email from userinfo when the provider keeps it out of the ID token', async () => {
      const conformant = await startTestProvider({ people: PEOPLE, conformIdTokenClaims: true });
      sandbox.defer(() => conformant.stop());
      const { serve, owner, cli } = await serveWithProvider({ provider: conformant });
      await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
      const signedIn = await signInThrough(serve.url, conformant, 'ivy');
      expect((await me(serve.url, signedIn.session!)).user).toMatchObject({
        email: 'ivy@invited.test',
        name: 'Ivy Invited',
      });
      expect((await signInThrough(serve.url, conformant, 'vic')).location).toBe(
        '/?signInError=email_unverified',
      );
    });

    it('with password sign-in off, a password is refused and the sign-in page is told so', async () => {
      const { serve, owner, cli } = await serveWithProvider({ env: { SESSIONDESK_PASSWORD_SIGN_IN: 'off' } });
      await waitFor(() => serve.stdout().includes('only: password sign-in is off'), 'serve to say so');
      const refused = await fetch(`${serve.url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: serve.url },
        body: JSON.stringify({ email: owner.email, password: PASSWORD }),
      });
      expect(refused.status).toBe(403);
      const host = new URL(idp.issuer).host;
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
        `Password sign-in is off on this server: sign in with ${host} (/api/auth/oidc/start).`,
      );
      const methods = await fetch(`${serve.url}/api/auth/methods`);
      expect(await methods.json()).toEqual({
        password: false,
        teamServer: TEST_BACKEND === 'postgres',
        identityProvider: { name: host, startUrl: '/api/auth/oidc/start' },
      });
      // The account commands still work.
      expect(
        await ok(
          cli('user', 'create', '--email', 'cli@invited.test', '--name', 'Cli', '--password', PASSWORD),
        ),
      ).toMatch(/^usr_/u);
    });

    it('a start with a returnTo outside the dashboard lands on the sign-in page', async () => {
      const { serve } = await serveWithProvider();
      for (const returnTo of [
        'https://evil.example/',
        '//evil.example/',
        '/\\evil.example',
        '/api/auth/me',
      ]) {
        const response = await fetch(
          `${serve.url}/api/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`,
          {
            redirect: 'manual',
          },
        );
        expect(response.status, returnTo).toBe(303);
        expect(response.headers.get('location'), returnTo).toBe('/?signInError=bad_return_to');
      }
    });

    it(
      "the provider's answer may reach another server process than the one the sign-in started on",
      skipWithReason(
        TEST_BACKEND === 'postgres' ? null : 'two server processes share a team database (PostgreSQL) only',
      ),
      async () => {
        const { serve, owner, cli, dataDir, oidcArgs, env } = await serveWithProvider();
        await ok(cli('member', 'add', '--workspace', owner.org, '--email', 'ivy@invited.test'));
        // A second process on the same database, with the same client: what a team runs behind a proxy.
        const other = await sandbox.serveWithEnv(
          ['--port', '0', '--data-dir', sandbox.dataDir(), ...oidcArgs],
          {
            ...env,
            SESSIONDESK_DATABASE_URL: await databaseFor(dataDir),
          },
        );
        const started = await startSignIn(serve.url);
        const callback = new URL(await signInAtProvider(idp, started.authorizationUrl, 'ivy'));
        // As a proxy in front of both would: the same answer, to the other process.
        const elsewhere = `${other.url}${callback.pathname}${callback.search}`;
        expect(elsewhere.startsWith(serve.url)).toBe(false);
        const answer = await answerCallback(elsewhere, started.cookie);
        expect(answer.location, other.stderr()).toBe('/');
        expect((await me(serve.url, answer.session!)).user.email).toBe('ivy@invited.test');
      },
    );
  },
);

describe('how to sign in, on a server without an identity provider', () => {
  it('says password only, and has no identity provider routes', async () => {
    const dataDir = sandbox.dataDir();
    const serve = await sandbox.serve(dataDir);
    expect(await (await fetch(`${serve.url}/api/auth/methods`)).json()).toEqual({
      password: true,
      teamServer: TEST_BACKEND === 'postgres',
    });
    expect((await fetch(`${serve.url}/api/auth/oidc/start`, { redirect: 'manual' })).status).toBe(404);
  });
});
