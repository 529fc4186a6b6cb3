import { existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed, NetworkProxies, type ProxyLease } from '../../src-main/agents/sandbox/network-proxy.js';
import { tempDir } from '../helpers/server.js';

describe('which hosts an allow-list lets through', () => {
  it.each([
    [['example.com'], 'example.com', 443, true],
    [['example.com'], 'EXAMPLE.com.', 80, true],
    [['example.com'], 'api.example.com', 443, false],
    [['example.com'], 'example.com.evil.test', 443, false],
    [['*.example.com'], 'api.example.com', 443, true],
    [['*.example.com'], 'a.b.example.com', 443, true],
    [['*.example.com'], 'example.com', 443, false],
    [['*.example.com'], 'badexample.com', 443, false],
    [['example.com:443'], 'example.com', 443, true],
    [['example.com:443'], 'example.com', 80, false],
    [['api.example.com'], '127.0.0.1', 80, false],
    [['127.0.0.1'], 'localhost', 80, false],
    [['localhost:8080'], 'localhost', 8080, true],
  ] as const)('%j lets %s:%i through: %s', (patterns, host, port, allowed) => {
    expect(hostAllowed(patterns, host, port)).toBe(allowed);
  });
});

/** Sends raw bytes to the proxy's socket and collects all it answers until it closes the connection. */
function exchange(socket: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(socket, () => client.write(text));
    let got = '';
    client.on('data', (d: Buffer) => (got += d.toString()));
    client.on('error', reject);
    client.on('close', () => resolve(got));
  });
}

describe("a run's proxy, over its unix socket", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function service(): Promise<number> {
    const server: Server = createServer((req, res) => res.end(`answered ${req.method} ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    return (server.address() as AddressInfo).port;
  }

  async function proxy(allowed: string[]): Promise<ProxyLease> {
    const proxies = new NetworkProxies(() => [tempDir()]);
    const lease = await proxies.open(allowed);
    cleanups.push(() => lease.close());
    return lease;
  }

  it('checks every request of a kept-alive connection, not only the first', async () => {
    const port = await service();
    const lease = await proxy([`127.0.0.1:${port}`]);
    const answer = await exchange(
      lease.socket,
      `GET http://127.0.0.1:${port}/first HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n` +
        `GET http://localhost:${port}/second HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toContain('answered GET /first');
    expect(answer).not.toContain('answered GET /second');
    expect(answer).toContain(`403 Forbidden`);
    expect(answer).toContain(`Session Desk refused the connection to localhost:${port}`);
  });

  it('tunnels CONNECT to an allowed host, and refuses others with a 403 naming the host', async () => {
    const port = await service();
    const lease = await proxy(['127.0.0.1']);
    const tunnelled = await exchange(
      lease.socket,
      `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n` +
        `GET /inside HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(tunnelled).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n/u);
    expect(tunnelled).toContain('answered GET /inside');
    const refused = await exchange(
      lease.socket,
      'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n',
    );
    expect(refused).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/u);
    expect(refused).toContain(
      "Session Desk refused the connection to example.org:443: it is not in this workspace's network allow-list",
    );
  });

  it('keeps its socket in a private folder, gone once the last run using it ends', async () => {
    const proxies = new NetworkProxies(() => [tempDir()]);
    const first = await proxies.open(['example.org']);
    const second = await proxies.open(['example.com']);
    const folder = dirname(first.socket);
    expect(dirname(second.socket)).toBe(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    await first.close();
    expect(existsSync(second.socket)).toBe(true);
    await second.close();
    expect(existsSync(folder)).toBe(false);
  });
});
