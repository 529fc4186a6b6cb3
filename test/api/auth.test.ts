import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorResponseSchema, ListSessionsResponseSchema, MeResponseSchema } from '../../src-shared/index.js';
import {
  asUser,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  steppableClock,
  uniqueEmail,
  type TestServer,
} from '../helpers/server.js';

const DAY = 24 * 60 * 60 * 1000;

async function status(response: Response, expected: number, code?: string) {
  expect(response.status).toBe(expected);
  if (expected >= 400) {
    const body = ErrorResponseSchema.parse(await response.json());
    if (code) expect(body.error.code).toBe(code);
  }
}

describe('API key methods and authorization', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    [owner, other] = await Promise.all([seedWorkspace(server, 'owner'), seedWorkspace(server, 'other')]);
  });
  afterAll(async () => server.dispose());

  const list = (init: RequestInit = {}, query = '') => fetch(`${server.url}/api/sessions${query}`, init);

  it('accepts the key as x-api-key, as ?apiKey= and as a Bearer token', async () => {
    for (const response of [
      await list({ headers: { 'x-api-key': owner.apiKey } }),
      await list({}, `?apiKey=${owner.apiKey}`),
      await list({ headers: { authorization: `Bearer ${owner.apiKey}` } }),
      await list({ headers: { authorization: `bearer   ${owner.apiKey}` } }),
    ]) {
      expect(response.status).toBe(200);
      ListSessionsResponseSchema.parse(await response.json());
    }
  });

  it('the same key sent twice is fine', async () => {
    const response = await list(
      { headers: { 'x-api-key': owner.apiKey, authorization: `Bearer ${owner.apiKey}` } },
      `?apiKey=${owner.apiKey}`,
    );
    expect(response.status).toBe(200);
  });

  it('ambiguous or malformed credentials are 401, never 500', async () => {
    await status(await list({}, `?apiKey=${owner.apiKey}&apiKey=${other.apiKey}`), 401, 'unauthorized');
    await status(
      await list({ headers: { 'x-api-key': owner.apiKey, authorization: `Bearer ${other.apiKey}` } }),
      401,
    );
    await status(await list({ headers: { authorization: 'Bearer' } }), 401);
    await status(await list({ headers: { authorization: 'Bearer    ' } }), 401);
    await status(
      await list({ headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }),
      401,
    );
    await status(await list({ headers: { 'x-api-key': '' } }), 401);
    await status(await list({}, '?apiKey='), 401);
    await status(await list({ headers: { 'x-api-key': `${owner.apiKey}x` } }), 401);
  });

  it('a key answers only for its own workspace (rule 1 and 3)', async () => {
    await status(
      await list({ headers: { 'x-api-key': owner.apiKey } }, `?organizationId=${owner.organizationId}`),
      200,
    );
    await status(
      await list({ headers: { 'x-api-key': owner.apiKey } }, `?organizationId=${other.organizationId}`),
      403,
      'forbidden',
    );
  });

  it('the cookie needs membership (rule 2), and membership added later takes effect at once', async () => {
    const query = `?organizationId=${other.organizationId}`;
    await status(await asUser(server, owner.user.cookie, 'GET', `/api/sessions${query}`), 403);
    await server.accounts.addMember({ organizationId: other.organizationId, email: owner.user.email });
    await status(await asUser(server, owner.user.cookie, 'GET', `/api/sessions${query}`), 200);
  });

  it('a revoked key is refused on the next request', async () => {
    const key = await server.accounts.createKey({
      organizationId: owner.organizationId,
      label: 'short-lived',
    });
    await status(await list({ headers: { 'x-api-key': key.key } }), 200);
    await server.accounts.revokeKey({ organizationId: owner.organizationId, keyId: key.id });
    await status(await list({ headers: { 'x-api-key': key.key } }), 401);
  });

  it('records when a key was last used', async () => {
    const key = await server.accounts.createKey({ organizationId: owner.organizationId, label: 'tracked' });
    expect(
      (await server.accounts.listKeys(owner.organizationId)).find((k) => k.id === key.id)?.lastUsedAt,
    ).toBeUndefined();
    await status(await list({ headers: { 'x-api-key': key.key } }), 200);
    await expect
      .poll(
        async () =>
          (await server.accounts.listKeys(owner.organizationId)).find((k) => k.id === key.id)?.lastUsedAt,
      )
      .toBeDefined();
  });
});

describe('sign-in, cookie, sign-out', () => {
  let server: TestServer;
  const email = uniqueEmail('signin');
  beforeAll(async () => {
    server = await startTestServer();
    await server.accounts.createUser({ email, name: 'Sign In', password: PASSWORD });
    await server.accounts.createWorkspace({ name: 'Mine', ownerEmail: email });
  });
  afterAll(async () => server.dispose());

  const signInRaw = (body: unknown) =>
    fetch(`${server.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('a wrong password, then the right one; the cookie is HttpOnly, SameSite=Strict, Path=/', async () => {
    const wrong = await signInRaw({ email, password: 'not the password' });
    await status(wrong, 401, 'unauthorized');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const right = await signInRaw({ email: email.toUpperCase(), password: PASSWORD });
    expect(right.status).toBe(200);
    const body = (await right.json()) as { user: { email: string } };
    expect(body.user.email).toBe(email);
    expect(JSON.stringify(body)).not.toMatch(/password|hash/i);
    const cookie = right.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^__session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Strict/i);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; Expires=/);
  });

  it('an unknown email answers exactly like a wrong password', async () => {
    const unknown = await signInRaw({ email: 'nobody@example.test', password: PASSWORD });
    const wrong = await signInRaw({ email, password: 'wrong password' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual(await wrong.json());
  });

  it('each sign-in issues a new token; /me works; sign-out ends that one only', async () => {
    const first = await signIn(server, email);
    const second = await signIn(server, email);
    expect(first).not.toBe(second);
    const me = MeResponseSchema.parse(await (await asUser(server, first, 'GET', '/api/auth/me')).json());
    expect(me.user.email).toBe(email);
    expect(me.workspaces).toHaveLength(1);
    expect(me.workspaces[0]?.role).toBe('owner');

    const out = await asUser(server, first, 'POST', '/api/auth/sign-out');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^__session=;/);
    await status(await asUser(server, first, 'GET', '/api/auth/me'), 401);
    await status(await asUser(server, second, 'GET', '/api/auth/me'), 200);
    // Signing out again is harmless.
    expect((await asUser(server, first, 'POST', '/api/auth/sign-out')).status).toBe(204);
  });

  it('/me refuses API keys', async () => {
    const user = (await server.storage.repos.users.findByEmail(email))!;
    const [workspace] = await server.storage.repos.workspaces.listForUser(user.id);
    const key = await server.accounts.createKey({ organizationId: workspace!.organizationId });
    await status(
      await fetch(`${server.url}/api/auth/me`, { headers: { 'x-api-key': key.key } }),
      400,
      'api_key_not_allowed',
    );
  });

  it('400 for a malformed sign-in body', async () => {
    await status(await signInRaw({ email }), 400, 'validation_failed');
    await status(await signInRaw({ email, password: PASSWORD, remember: true }), 400, 'validation_failed');
  });
});

describe('rate limits and expiry (steppable clock)', () => {
  let server: TestServer;
  const clock = steppableClock('2026-03-01T12:00:00.000Z');
  const email = uniqueEmail('limited');
  beforeAll(async () => {
    server = await startTestServer({ clock });
    await server.accounts.createUser({ email, name: 'Limited', password: PASSWORD });
    await server.accounts.createWorkspace({ name: 'Limited', ownerEmail: email });
  });
  afterAll(async () => server.dispose());

  const attempt = (password: string) =>
    fetch(`${server.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });

  it('five failures lock the account with 429 and Retry-After, even for the right password', async () => {
    for (let i = 0; i < 5; i += 1) await status(await attempt('wrong password'), 401);
    const limited = await attempt(PASSWORD);
    await status(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    clock.advance(retryAfter * 1000);
    expect((await attempt(PASSWORD)).status).toBe(200);
  });

  it('repeated bad API keys are limited too', async () => {
    let last: Response | undefined;
    for (let i = 0; i < 31; i += 1) {
      last = await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': `sdk_bad_${i}` } });
    }
    await status(last!, 429, 'rate_limited');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    clock.advance(61_000);
    await status(await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': 'sdk_bad' } }), 401);
  });

  it('a sign-in expires after 7 idle days, and after 30 days whatever happens', async () => {
    const idle = await signIn(server, email);
    clock.advance(7 * DAY - 1000);
    await status(await asUser(server, idle, 'GET', '/api/auth/me'), 200);
    clock.advance(7 * DAY - 1000);
    // Seen a moment ago, so not idle yet.
    await expect.poll(async () => (await asUser(server, idle, 'GET', '/api/auth/me')).status).toBe(200);
    clock.advance(7 * DAY + 1000);
    const expired = await asUser(server, idle, 'GET', '/api/auth/me');
    await status(expired, 401);

    const busy = await signIn(server, email);
    for (let day = 0; day < 29; day += 1) {
      clock.advance(DAY);
      await expect.poll(async () => (await asUser(server, busy, 'GET', '/api/auth/me')).status).toBe(200);
    }
    clock.advance(DAY);
    await status(await asUser(server, busy, 'GET', '/api/auth/me'), 401);
  });
});
