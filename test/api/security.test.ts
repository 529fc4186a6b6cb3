import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorResponseSchema } from '../../src-shared/index.js';
import { seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

/** Sends raw bytes, so the Host header can be anything, or absent. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.write(text);
  });
}

describe('localhost attacks', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let port: number;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (d: Buffer) => (logText += d.toString()));

  beforeAll(async () => {
    server = await startTestServer({ log: { level: 'debug', stream: logs } });
    owner = await seedWorkspace(server);
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => server.dispose());

  it('refuses a foreign Host (DNS rebinding) with 403 on every kind of route, before auth', async () => {
    for (const path of [
      '/api/sessions',
      '/',
      '/api/openapi.json',
      '/api/nope',
      `/api/sessions?apiKey=${owner.apiKey}`,
    ]) {
      for (const host of [
        'evil.example',
        `evil.example:${port}`,
        `127.0.0.1:${port + 1}`,
        `localhost`,
        `127.0.0.2:${port}`,
      ]) {
        const reply = await rawRequest(
          port,
          `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
        );
        expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
        expect(reply).toContain('"forbidden_host"');
      }
    }
  });

  it('refuses a request without Host', async () => {
    const reply = await rawRequest(port, `GET /api/sessions HTTP/1.0\r\nx-api-key: ${owner.apiKey}\r\n\r\n`);
    expect(reply.split('\r\n')[0]).toMatch(/^HTTP\/1\.[01] (400|403)/);
    expect(reply).not.toContain('"sessions"');
  });

  it('accepts localhost and [::1] spellings of its own port', async () => {
    for (const host of [`localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      const reply = await rawRequest(
        port,
        `GET /api/sessions HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${owner.apiKey}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    }
  });

  it('refuses a cookie-authenticated write from another origin, another localhost port included', async () => {
    const body = JSON.stringify({ organizationId: owner.organizationId, initialMessage: 'csrf' });
    for (const headers of [
      { origin: `http://127.0.0.1:${port + 1}` },
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
      {},
    ]) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, 'content-type': 'application/json', ...headers },
        body,
      });
      expect(response.status).toBe(403);
      expect(ErrorResponseSchema.parse(await response.json()).error.code).toBe('forbidden_origin');
    }
    const list = await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': owner.apiKey } });
    expect(((await list.json()) as { sessions: unknown[] }).sessions).toHaveLength(0);
  });

  it('accepts a same-origin write by Origin or by Sec-Fetch-Site', async () => {
    for (const headers of [{ origin: server.origin }, { 'sec-fetch-site': 'same-origin' }]) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ organizationId: owner.organizationId }),
      });
      expect(response.status).toBe(201);
    }
  });

  it('refuses text/plain and form bodies (the "simple" cross-site requests) with 415', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': type },
        body: JSON.stringify({ organizationId: owner.organizationId }),
      });
      expect(response.status).toBe(415);
      expect(ErrorResponseSchema.parse(await response.json()).error.code).toBe('unsupported_media_type');
    }
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const response = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId: owner.organizationId, initialMessage: 'x'.repeat(1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(ErrorResponseSchema.parse(await response.json()).error.code).toBe('payload_too_large');
  });

  it('refuses __proto__ and constructor keys with 400', async () => {
    for (const body of [
      `{"organizationId":"${owner.organizationId}","__proto__":{"admin":true}}`,
      `{"organizationId":"${owner.organizationId}","constructor":{"prototype":{"admin":true}}}`,
    ]) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      ErrorResponseSchema.parse(await response.json());
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('sends no CORS headers, even to a preflight from a foreign origin', async () => {
    const preflight = await fetch(`${server.url}/api/sessions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://evil.example',
        'access-control-request-method': 'PATCH',
        'access-control-request-private-network': 'true',
      },
    });
    const simple = await fetch(`${server.url}/api/sessions`, {
      headers: { origin: 'http://evil.example', 'x-api-key': owner.apiKey },
    });
    for (const response of [preflight, simple]) {
      for (const name of response.headers.keys()) expect(name.startsWith('access-control-')).toBe(false);
    }
  });

  it('marks JSON nosniff and uncacheable, and gives HTML a strict CSP', async () => {
    const json = await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': owner.apiKey } });
    expect(json.headers.get('x-content-type-options')).toBe('nosniff');
    expect(json.headers.get('cache-control')).toBe('no-store');
    const html = await fetch(`${server.url}/`);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = html.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "script-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(html.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('never writes a key from the query string, or a cookie, to the log', async () => {
    const bogus = 'sdk_bogusbogusbogusbogusbogusbogusbogusbogusbog';
    await fetch(`${server.url}/api/sessions?apiKey=${owner.apiKey}&limit=5`);
    await fetch(`${server.url}/api/sessions?APIKEY=${bogus}`);
    await fetch(`${server.url}/api/nope?apiKey=${owner.apiKey}`);
    await fetch(`${server.url}/api/auth/me`, { headers: { cookie: owner.user.cookie } });
    await expect.poll(() => logText).toContain('"url":"/api/nope?apiKey=[redacted]"');
    expect(logText).toContain('"url":"/api/sessions?apiKey=[redacted]&limit=5"');
    expect(logText).not.toContain(owner.apiKey);
    expect(logText).not.toContain(bogus);
    expect(logText).not.toContain(owner.user.cookie.split('=')[1]);
  });
});
