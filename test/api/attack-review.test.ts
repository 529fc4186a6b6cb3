import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asUser,
  seedWorkspace,
  startTestServer,
  steppableClock,
  uniqueEmail,
  PASSWORD,
  type TestServer,
} from '../helpers/server.js';

/** Sends raw bytes and collects the whole answer until the server closes the connection. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.write(text);
  });
}

describe('rate limits cannot be used to lock others out', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  const clock = steppableClock('2026-03-01T12:00:00.000Z');
  beforeAll(async () => {
    server = await startTestServer({ clock });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it('a web page sending bad keys (cross-site marked) is never counted, and a valid key always goes through', async () => {
    for (let i = 0; i < 40; i += 1) {
      const response = await fetch(`${server.url}/api/sessions?apiKey=bad${i}`, {
        headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
      });
      expect(response.status).toBe(401);
    }
    // A local script with bad keys is limited...
    let last: Response | undefined;
    for (let i = 0; i < 31; i += 1) last = await fetch(`${server.url}/api/sessions?apiKey=sdk_bad${i}`);
    expect(last!.status).toBe(429);
    // ...but never blocks a valid key.
    const valid = await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': owner.apiKey } });
    expect(valid.status).toBe(200);
    clock.advance(61_000);
  });

  it('another 127.x source address is the same client for the bad-key limit', async () => {
    const port = Number(new URL(server.url).port);
    const from = (localAddress: string, i: number) =>
      new Promise<string>((resolve, reject) => {
        const socket: Socket = connect({ port, host: '127.0.0.1', localAddress });
        let out = '';
        socket.on('data', (d) => (out += d.toString()));
        socket.on('close', () => resolve(out.split('\r\n')[0] ?? ''));
        socket.on('error', reject);
        socket.write(
          `GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: sdk_bad_${i}\r\nConnection: close\r\n\r\n`,
        );
      });
    for (let i = 0; i < 30; i += 1) expect(await from('127.0.0.1', i)).toContain('401');
    expect(await from('127.0.0.5', 99)).toContain('429');
    clock.advance(61_000);
  });

  it('31 bad sign-ins (past the old per-client limit of 30) do not lock an account out: sign-in limits are per account', async () => {
    const email = uniqueEmail('victim');
    await server.accounts.createUser({ email, name: 'Victim', password: PASSWORD });
    for (let i = 0; i < 31; i += 1) {
      const response = await fetch(`${server.url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `nobody${i}@example.test`, password: 'wrong password' }),
      });
      expect(response.status).toBe(401);
    }
    const mine = await fetch(`${server.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(mine.status).toBe(200);
  }, 150_000);
});

describe('transport and cookie attacks', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ bodyTimeoutMs: 2000, maxConnections: 20 });
    owner = await seedWorkspace(server);
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => server.dispose());

  it('two __session cookies (one tossed by another port) are refused with 400 and both cleared', async () => {
    const response = await fetch(`${server.url}/api/auth/me`, {
      headers: { cookie: `__session=attacker; ${owner.user.cookie}` },
    });
    expect(response.status).toBe(400);
    const cleared = response.headers.getSetCookie();
    expect(cleared.some((c) => /^__session=;.*Path=\/(;|$)/u.test(c))).toBe(true);
    expect(cleared.some((c) => /^__session=;.*Path=\/api(;|$)/u.test(c))).toBe(true);
    expect(cleared.every((c) => /Expires=Thu, 01 Jan 1970/u.test(c))).toBe(true);
    // One cookie is fine.
    expect((await asUser(server, owner.user.cookie, 'GET', '/api/auth/me')).status).toBe(200);
  });

  it('a body that trickles in is answered 408 and the connection closed', async () => {
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => {
        clearInterval(drip);
        resolve(out);
      });
      socket.on('error', () => resolve(out));
      socket.write(
        `PATCH /api/sessions/ses_AAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${owner.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`,
      );
      const drip = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, 500);
      setTimeout(() => reject(new Error('still open after 15 s')), 15_000).unref();
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer).toContain('took too long to arrive');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('connections beyond the cap are closed, and the server answers again when they go', async () => {
    const held: Socket[] = [];
    for (let i = 0; i < 20; i += 1) {
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      held.push(socket);
    }
    const refused = await rawRequest(
      port,
      `GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(refused).toBe('');
    for (const socket of held) socket.destroy();
    await expect
      .poll(
        async () =>
          (
            await rawRequest(
              port,
              `GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
            )
          ).split('\r\n')[0],
      )
      .toBe('HTTP/1.1 200 OK');
  });

  it('an absolute-form target naming another host is refused, even with a good Host', async () => {
    for (const target of ['http://evil.example/api/sessions', `http://evil.example:${port}/api/sessions`]) {
      const reply = await rawRequest(
        port,
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply.split('\r\n')[0], target).toBe('HTTP/1.1 403 Forbidden');
      expect(reply).toContain('forbidden_host');
    }
    const ours = await rawRequest(
      port,
      `GET http://127.0.0.1:${port}/api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(ours.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});
