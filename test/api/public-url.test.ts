import { networkInterfaces } from 'node:os';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest, type RawAnswer, type RawInit } from '../helpers/raw-request.js';
import { IN_CI } from '../helpers/tools.js';
import { PASSWORD, startTestServer, uniqueEmail, type TestServer } from '../helpers/server.js';

/**
 * A server with a public URL (`serve --public-url`), as a reverse proxy in front of it and the
 * machine's own programs reach it: which Host it answers, which Origin may write with a cookie,
 * what its cookies are, how the first owner is made without a secret in a URL, and whose
 * forwarded headers it believes (`--trust-proxy`). Requests come from chosen source addresses
 * of this machine: 127.0.0.2 plays the proxy, 127.0.0.1 and 127.0.0.3 this machine's programs.
 */

const PUBLIC = 'https://team.example.com';
const PROXY = '127.0.0.2';

type Answer = RawAnswer;

/** A request to the test server, as from `from` (an address of this machine), to `to`. */
function send(
  server: TestServer,
  init: Omit<RawInit, 'ca'> & { path: string; to?: string },
): Promise<Answer> {
  const { path, to, ...rest } = init;
  const port = new URL(server.url).port;
  return rawRequest(`http://${to ?? '127.0.0.1'}:${port}${path}`, rest);
}

const codeOf = (answer: Answer) => (JSON.parse(answer.body) as { error?: { code: string } }).error?.code;

/** What a browser on the public URL sends, as the proxy hands it on. */
const throughProxy = (client: string) => ({
  from: PROXY,
  headers: { host: 'team.example.com', 'x-forwarded-for': client, 'x-forwarded-proto': 'https' },
});

/** The server's log as JSON lines, to read which client it saw. */
function logStream() {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Record<string, unknown>);
  });
  return { stream, lines };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

describe('a server with a public URL', () => {
  it('answers requests addressed to its public host, and loopback names only from this machine directly', async () => {
    server = await startTestServer({ publicUrl: PUBLIC, trustProxy: [PROXY] });
    const port = new URL(server.url).port;
    const ok = async (init: Parameters<typeof send>[1]) => (await send(server!, init)).status;

    expect(await ok({ path: '/api/setup', headers: { host: 'team.example.com' } })).toBe(200);
    expect(await ok({ path: '/api/setup', ...throughProxy('198.51.100.7') })).toBe(200);
    // This machine's scripts and health checks, straight to the port.
    expect(await ok({ path: '/api/setup', headers: { host: `127.0.0.1:${port}` } })).toBe(200);
    expect(await ok({ path: '/api/setup', from: '127.0.0.3', headers: { host: `localhost:${port}` } })).toBe(
      200,
    );

    // A proxy that rewrites Host to its upstream's: the server cannot tell what was asked for.
    const rewritten = await send(server, {
      path: '/api/setup',
      from: PROXY,
      headers: { host: `127.0.0.1:${port}`, 'x-forwarded-for': '198.51.100.7' },
    });
    expect(rewritten.status).toBe(403);
    expect(codeOf(rewritten)).toBe('forbidden_host');
    expect(rewritten.body).toContain('https://team.example.com');
    expect(rewritten.body).toContain('proxy_set_header Host $http_host');

    for (const host of ['evil.example', 'team.example.com:8443', 'team.example.com.evil.example']) {
      const refused = await send(server, { path: '/api/setup', headers: { host } });
      expect(refused.status, host).toBe(403);
      expect(codeOf(refused), host).toBe('forbidden_host');
    }
    // Static files and the dashboard page too.
    expect(await ok({ path: '/', headers: { host: 'evil.example' } })).toBe(403);
  });

  it('refuses loopback names from another machine, which reaches it only by the public URL', async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (address === undefined) {
      const why = 'this machine has no network address other than loopback to come from';
      if (IN_CI) throw new Error(why);
      console.warn(`skipped: ${why}`);
      return;
    }
    server = await startTestServer({ publicUrl: PUBLIC, trustProxy: [PROXY] });
    const port = new URL(server.url).port;
    // The server listens on 127.0.0.1; a connection from this machine's other address to it
    // comes from that address, as another machine's would.
    const fromOutside = await send(server, {
      path: '/api/setup',
      from: address,
      headers: { host: `127.0.0.1:${port}` },
    });
    expect(fromOutside.status).toBe(403);
    expect(codeOf(fromOutside)).toBe('forbidden_host');
    const publicHost = await send(server, {
      path: '/api/setup',
      from: address,
      headers: { host: 'team.example.com' },
    });
    expect(publicHost.status).toBe(200);
  });

  it('takes cookie-carrying writes only from the public origin, and sets Secure cookies over https', async () => {
    server = await startTestServer({ publicUrl: PUBLIC, trustProxy: [PROXY] });
    const port = new URL(server.url).port;
    const email = uniqueEmail('lead');
    await server.accounts.createUser({ email, name: 'Lead', password: PASSWORD });

    const signIn = (headers: Record<string, string>, from?: string) =>
      send(server!, {
        method: 'POST',
        path: '/api/auth/sign-in',
        ...(from ? { from } : {}),
        headers,
        body: { email, password: PASSWORD },
      });
    const local = await signIn({ host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` });
    expect(local.status).toBe(403);
    expect(codeOf(local)).toBe('forbidden_origin');
    const foreign = await signIn(
      { ...throughProxy('198.51.100.7').headers, origin: 'https://evil.example' },
      PROXY,
    );
    expect(foreign.status).toBe(403);

    const signedIn = await signIn({ ...throughProxy('198.51.100.7').headers, origin: PUBLIC }, PROXY);
    expect(signedIn.status, signedIn.body).toBe(200);
    const cookie = String(signedIn.headers['set-cookie']);
    expect(cookie).toMatch(/^__session=/u);
    expect(cookie).toMatch(/; Secure/u);
    expect(cookie).toMatch(/; HttpOnly/u);
    expect(cookie).toMatch(/; SameSite=Strict/u);
  });

  it('sets cookies without Secure for an http public URL on this machine (trying a proxy out)', async () => {
    server = await startTestServer({ publicUrl: 'http://localhost:8080' });
    const email = uniqueEmail('lead');
    await server.accounts.createUser({ email, name: 'Lead', password: PASSWORD });
    const signedIn = await send(server, {
      method: 'POST',
      path: '/api/auth/sign-in',
      headers: { host: 'localhost:8080', origin: 'http://localhost:8080' },
      body: { email, password: PASSWORD },
    });
    expect(signedIn.status, signedIn.body).toBe(200);
    expect(String(signedIn.headers['set-cookie'])).not.toMatch(/Secure/u);
  });

  it('makes the first owner with the setup code typed in, never a token in a URL', async () => {
    server = await startTestServer({ publicUrl: PUBLIC, trustProxy: [PROXY] });
    const code = server.launchToken;
    expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/u);
    const browser = throughProxy('198.51.100.7');
    const status = await send(server, { path: '/api/setup', ...browser });
    expect(JSON.parse(status.body)).toMatchObject({ needed: true, launchToken: false, setupCode: true });

    const exchange = (token: string) =>
      send(server!, {
        method: 'POST',
        path: '/api/auth/launch',
        from: PROXY,
        headers: { ...browser.headers, origin: PUBLIC },
        body: { token },
      });
    const wrong = await exchange('AAAA-BBBB-CCCC-DDDD');
    expect(wrong.status).toBe(403);
    expect(wrong.body).toContain('setup code');
    // As a person types it: lower case, no dashes, an O for a zero.
    const typed = code.toLowerCase().replaceAll('-', '').replaceAll('0', 'o');
    const traded = await exchange(typed);
    expect(traded.status, traded.body).toBe(204);
    const launch = String(traded.headers['set-cookie']);
    expect(launch).toMatch(/^__launch=/u);
    expect(launch).toMatch(/; Secure/u);

    const withoutCode = await send(server, {
      method: 'POST',
      path: '/api/setup',
      from: PROXY,
      headers: { ...browser.headers, origin: PUBLIC },
      body: { email: 'lead@example.com', name: 'Lead', password: PASSWORD, workspaceName: 'Team' },
    });
    expect(withoutCode.status).toBe(403);
    expect(withoutCode.body).toContain('setup code');
    const setup = await send(server, {
      method: 'POST',
      path: '/api/setup',
      from: PROXY,
      headers: { ...browser.headers, origin: PUBLIC, cookie: launch.split(';')[0]! },
      body: { email: 'lead@example.com', name: 'Lead', password: PASSWORD, workspaceName: 'Team' },
    });
    expect(setup.status, setup.body).toBe(201);
    expect(String(setup.headers['set-cookie'])).toMatch(/__session=.*; Secure/u);
  });

  it("believes forwarded addresses only from the named proxies: limits and logs use the real client's", async () => {
    const log = logStream();
    server = await startTestServer({
      publicUrl: PUBLIC,
      trustProxy: [PROXY],
      log: { level: 'info', stream: log.stream },
    });
    const port = new URL(server.url).port;
    const badKey = (init: { from: string; headers: Record<string, string> }) =>
      send(server!, {
        path: '/api/sessions',
        ...init,
        headers: { ...init.headers, 'x-api-key': 'sdk_wrong' },
      });

    // Through the proxy, one client's bad keys put it into 429, and only it.
    for (let i = 0; i < 30; i++) expect((await badKey(throughProxy('198.51.100.7'))).status).toBe(401);
    expect((await badKey(throughProxy('198.51.100.7'))).status).toBe(429);
    expect((await badKey(throughProxy('198.51.100.8'))).status).toBe(401);

    // A program that is not the proxy cannot choose its address: each guess counts as itself.
    for (let i = 0; i < 30; i++) {
      const answer = await badKey({
        from: '127.0.0.3',
        headers: { host: `127.0.0.1:${port}`, 'x-forwarded-for': `203.0.113.${i}` },
      });
      expect(answer.status).toBe(401);
    }
    const limited = await badKey({
      from: '127.0.0.3',
      headers: { host: `127.0.0.1:${port}`, 'x-forwarded-for': '203.0.113.200' },
    });
    expect(limited.status).toBe(429);

    const refusals = log.lines.filter((line) => line.event === 'request.refused');
    const clients = new Set(refusals.map((line) => line.client));
    expect(clients).toContain('198.51.100.7');
    expect(clients).toContain('198.51.100.8');
    expect(clients).toContain('127.0.0.3');
    expect([...clients].some((client) => String(client).startsWith('203.0.113.'))).toBe(false);
    expect(clients).not.toContain(PROXY);
  });

  it('answers a health check addressed to any host, and nothing more', async () => {
    server = await startTestServer({ publicUrl: PUBLIC });
    const health = await send(server, { path: '/api/health', headers: { host: '10.0.0.5:4320' } });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    expect((await send(server, { path: '/api/health?x=1', headers: { host: '10.0.0.5:4320' } })).status).toBe(
      403,
    );
    expect(
      (await send(server, { method: 'POST', path: '/api/health', headers: { host: '10.0.0.5:4320' } }))
        .status,
    ).toBe(403);
  });
});

describe('a server without a public URL', () => {
  it('ignores forwarded headers and answers loopback names only, as the desktop does', async () => {
    const log = logStream();
    server = await startTestServer({ log: { level: 'info', stream: log.stream } });
    const port = new URL(server.url).port;
    expect((await send(server, { path: '/api/setup', headers: { host: 'team.example.com' } })).status).toBe(
      403,
    );
    const answer = await send(server, {
      path: '/api/sessions',
      from: PROXY,
      headers: { host: `127.0.0.1:${port}`, 'x-forwarded-for': '198.51.100.7', 'x-api-key': 'sdk_wrong' },
    });
    expect(answer.status).toBe(401);
    const refused = log.lines.find((line) => line.event === 'request.refused' && line.status === 401);
    expect(refused?.client).toBe(PROXY);
  });
});
