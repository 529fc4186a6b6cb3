import { rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import {
  ServerIdentityError,
  probeDevServer,
  verifiedAppOrigin,
  windowTitle,
} from '../../src-main/desktop/server-identity.js';
import { endSignIn } from '../../src-main/desktop/sign-out.js';
import { describeStartupError } from '../../src-main/desktop/startup-error.js';
import { readServerInfo } from '../../src-main/server-file.js';
import { startServer, type RunningServer } from '../../src-main/server/start.js';
import { DataDirLockedError } from '../../src-main/store/lock.js';
import { seedWorkspace, startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Another program on this machine: it records every request it gets. */
async function foreignProgram(): Promise<{ url: string; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Not Session Desk</h1>');
  });
  const url = await listen(server);
  return { url, port: Number(new URL(url).port), hits };
}

async function desktopServer(port: number): Promise<RunningServer & { dataDir: string }> {
  const dataDir = tempDir('sessiondesk-desktop-');
  const server = await startServer({
    dataDir,
    host: '127.0.0.1',
    port,
    fallbackToFreePort: true,
    clock: systemClock,
    logger: silentLogger,
  });
  cleanups.push(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return Object.assign(server, { dataDir });
}

describe('the port the desktop app uses', () => {
  it('is a free one when another program holds the one asked for, and only ours is ever loaded', async () => {
    const other = await foreignProgram();
    const server = await desktopServer(other.port);

    expect(server.url).not.toBe(other.url);
    const origin = verifiedAppOrigin(server.url, server.app.server.address());
    expect(origin).toBe(server.url);
    expect(() => verifiedAppOrigin(other.url, server.app.server.address())).toThrow(ServerIdentityError);

    // Scripts find the URL in use where `serve` writes it.
    expect(readServerInfo(server.dataDir)?.info).toMatchObject({ url: server.url, pid: process.pid });
    const page = await fetch(`${origin}/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(other.hits).toEqual([]);
  });

  it('verifies the URL against the socket: 127.0.0.1 literally, the same port', () => {
    const address = { address: '127.0.0.1', family: 'IPv4', port: 4319 };
    expect(verifiedAppOrigin('http://127.0.0.1:4319', address)).toBe('http://127.0.0.1:4319');
    for (const url of [
      'http://localhost:4319',
      'http://127.0.0.1:4320',
      'https://127.0.0.1:4319',
      'http://127.0.0.1:4319/x',
    ]) {
      expect(() => verifiedAppOrigin(url, address), url).toThrow(ServerIdentityError);
    }
    expect(() => verifiedAppOrigin('http://127.0.0.1:4319', { ...address, address: '0.0.0.0' })).toThrow(
      ServerIdentityError,
    );
    expect(() => verifiedAppOrigin('http://127.0.0.1:4319', '/tmp/socket')).toThrow(ServerIdentityError);
    expect(() => verifiedAppOrigin('http://127.0.0.1:4319', null)).toThrow(ServerIdentityError);
  });

  it('is shown in the window title', () => {
    expect(windowTitle('Session Desk', 'http://127.0.0.1:4319')).toBe('Session Desk — http://127.0.0.1:4319');
    expect(windowTitle('  ', 'http://127.0.0.1:5000')).toBe('Session Desk — http://127.0.0.1:5000');
  });
});

describe('a data folder held by another process', () => {
  it('is reported with the holder and the URL it serves', async () => {
    const first = await desktopServer(0);
    const err = await startServer({
      dataDir: first.dataDir,
      host: '127.0.0.1',
      port: 0,
      fallbackToFreePort: true,
      clock: systemClock,
      logger: silentLogger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirLockedError);
    const { title, message } = describeStartupError(err, first.dataDir);
    expect(title).toBe('Session Desk could not start');
    expect(message).toContain(first.dataDir);
    expect(message).toContain(`pid ${process.pid}`);
    expect(message).toContain(first.url);
    expect(message).toContain('SESSIONDESK_DATA_DIR');
  });

  it('any other error is shown as it is', () => {
    expect(describeStartupError(new Error('disk on fire'), '/tmp/x').message).toBe('disk on fire');
  });
});

describe('Sign Out from the menu', () => {
  let server: TestServer;
  afterEach(async () => server.dispose());

  it('ends the sign-in on the server, not only in the window', async () => {
    server = await startTestServer();
    const { user } = await seedWorkspace(server);
    const token = user.cookie.slice('__session='.length);
    const me = () => fetch(`${server.url}/api/auth/me`, { headers: { cookie: user.cookie } });
    expect((await me()).status).toBe(200);

    await endSignIn(server.url, token);
    expect((await me()).status).toBe(401);
    // Signing out twice is harmless.
    await endSignIn(server.url, token);
  });
});

/** A stand-in for the Vite dev server's /api proxy, rewriting Host and Origin or not. */
async function devProxy(target: string, rewrite: boolean): Promise<string> {
  let ownOrigin = '';
  const server = createServer((req, res) => {
    const headers = { ...req.headers };
    if (rewrite) {
      headers.host = new URL(target).host;
      if (headers.origin === ownOrigin) headers.origin = target;
    }
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  ownOrigin = await listen(server);
  return ownOrigin;
}

describe('npm run dev: the dev server must proxy /api to this very server', () => {
  it('passes through a proxy that reaches us and rewrites Host and Origin', async () => {
    const server = await desktopServer(0);
    const dev = await devProxy(server.url, true);
    expect(await probeDevServer(dev, server.app.server)).toEqual({ ok: true });
  });

  it('fails when the proxy does not rewrite Host and Origin (the dashboard would get 403s)', async () => {
    const server = await desktopServer(0);
    const dev = await devProxy(server.url, false);
    const probe = await probeDevServer(dev, server.app.server);
    expect(probe.ok).toBe(false);
    expect(!probe.ok && probe.reason).toMatch(/refused \(403\)/u);
  });

  it('fails when the proxy reaches another program (4319 held by someone else)', async () => {
    const server = await desktopServer(0);
    const other = await foreignProgram();
    const dev = await devProxy(other.url, true);
    const probe = await probeDevServer(dev, server.app.server);
    expect(probe.ok).toBe(false);
    expect(!probe.ok && probe.reason).toMatch(/does not reach this app's server/u);
  });

  it('fails when nothing answers', async () => {
    const server = await desktopServer(0);
    const gone = createServer();
    const url = await listen(gone);
    await new Promise<void>((done) => gone.close(() => done()));
    const probe = await probeDevServer(url, server.app.server, 2000);
    expect(probe.ok).toBe(false);
  });
});
