// A team server deployed as docs/reference/team-server.md says: a real PostgreSQL, two
// `serve --database --public-url https://… --trust-proxy …` processes, and in front of them the
// documented nginx and Caddy configurations, with TLS (a certificate made here), one upstream and
// two; pushes from a desktop through it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnServe, type ServeProcess } from '../helpers/cli.js';
import { PASSWORD } from '../helpers/cli-extra.js';
import { answer, desktopDataDir, prompt } from '../helpers/desktop-sessions.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import {
  freePort,
  httpsEventStream,
  makeCertificates,
  startCaddy,
  startNginx,
  type Certificates,
  type RunningProxy,
} from '../helpers/reverse-proxy.js';
import { rawRequest } from '../helpers/raw-request.js';
import { requireTools } from '../helpers/require-tools.js';
import { reverseProxyTools } from '../helpers/tools.js';
import { until } from '../helpers/until.js';

const EMAIL = 'lead@example.com';
/** This machine's program that plays a teammate's browser, on an address of its own. */
const CLIENT = '127.0.0.3';

interface LogLine {
  event?: string;
  url?: string;
  client?: string;
  status?: number;
}

function logLines(serve: ServeProcess): LogLine[] {
  return serve
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe(
  'a team server behind a reverse proxy with TLS',
  { ...requireTools(postgresTool(), ...reverseProxyTools()), timeout: 180_000 },
  () => {
    const pg = usePostgres();
    let dir: string;
    let certs: Certificates;
    let port: number;
    let publicUrl: string;
    const serves: ServeProcess[] = [];
    let organizationId: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'sessiondesk-proxy-'));
      certs = await makeCertificates(join(dir, 'tls'));
      port = await freePort();
      publicUrl = `https://localhost:${port}`;
      const database = pg.url();
      // The owner and a workspace first, on the database, as the deployment guide's step 1.
      const env = { SESSIONDESK_DATABASE_URL: database };
      const user = await runCli(
        ['user', 'create', '--email', EMAIL, '--name', 'Lead', '--password', PASSWORD],
        env,
      );
      expect(user.code, user.stderr).toBe(0);
      const workspace = await runCli(['workspace', 'create', '--name', 'Team', '--owner', EMAIL], env);
      expect(workspace.code, workspace.stderr).toBe(0);
      organizationId = workspace.stdout.trim();
      for (const name of ['a', 'b']) {
        serves.push(
          await spawnServe([
            '--port',
            '0',
            '--data-dir',
            join(dir, name),
            '--database',
            database,
            '--public-url',
            publicUrl,
            // The proxy runs on this machine and connects from 127.0.0.1; the teammates' browser
            // (CLIENT) is another address, whose claims must not count.
            '--trust-proxy',
            '127.0.0.1',
            '--log-level',
            'debug',
            '--log-format',
            'json',
          ]),
        );
      }
    }, 120_000);
    afterAll(async () => {
      for (const serve of serves) await serve.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const upstreams = (count: number) => serves.slice(0, count).map((serve) => new URL(serve.url).host);
    const request = (path: string, init: Omit<Parameters<typeof rawRequest>[1], 'ca'> = {}) =>
      rawRequest(`${publicUrl}${path}`, { ca: certs.ca, from: CLIENT, ...init });

    async function signIn(): Promise<string> {
      const answered = await request('/api/auth/sign-in', {
        method: 'POST',
        headers: { origin: publicUrl },
        body: { email: EMAIL, password: PASSWORD },
      });
      expect(answered.status, answered.body).toBe(200);
      const cookie = String(answered.headers['set-cookie']);
      expect(cookie).toMatch(/^__session=[^;]+; .*Secure/u);
      return cookie.split(';')[0]!;
    }

    /** What a teammate's browser does through the proxy, and what each process saw of it. */
    async function servedThrough(proxy: RunningProxy, processes: number): Promise<void> {
      const health = await request('/api/health');
      expect(health.status, proxy.logs()).toBe(200);
      expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
      const page = await request('/');
      expect(page.status).toBe(200);
      expect(String(page.headers['content-type'])).toMatch(/^text\/html/u);

      const cookie = await signIn();
      const before = serves.map((serve) => logLines(serve).length);
      for (let i = 0; i < 6; i++) {
        // The browser claims another address: the proxy passes on the one it saw.
        const me = await request('/api/auth/me', { headers: { cookie, 'x-forwarded-for': '203.0.113.9' } });
        expect(me.status, me.body).toBe(200);
      }
      // Each process logs a request once it has answered it: wait for the last lines.
      const seen = await until(
        () =>
          serves.map((serve, i) =>
            logLines(serve)
              .slice(before[i])
              .filter((line) => line.event === 'request' && line.url === '/api/auth/me'),
          ),
        (lines) => lines.flat().length >= 6,
        20_000,
      );
      expect(seen.flat()).toHaveLength(6);
      for (const line of seen.flat()) expect(line.client).toBe(CLIENT);
      // Round robin: each upstream answered its share.
      for (let i = 0; i < serves.length; i++) {
        if (i < processes) expect(seen[i]!.length, `process ${i}`).toBeGreaterThan(0);
        else expect(seen[i]).toHaveLength(0);
      }

      // Live events through the proxy: a session made on whichever process reaches the stream.
      const stream = httpsEventStream(`${publicUrl}/api/events?organizationId=${organizationId}`, {
        ca: certs.ca,
        headers: { cookie },
      });
      try {
        await stream.opened;
        expect(stream.status()).toBe(200);
        const created = await request('/api/sessions', {
          method: 'POST',
          headers: { cookie, origin: publicUrl },
          body: { organizationId, initialMessage: `Through ${processes} upstream(s)` },
        });
        expect(created.status, created.body).toBe(201);
        const id = (JSON.parse(created.body) as { session: { id: string } }).session.id;
        const events = await until(
          () => stream.received,
          (received) => received.some((e) => JSON.stringify(e.data).includes(id)),
          20_000,
        );
        expect(
          events.some((e) => JSON.stringify(e.data).includes(id)),
          stream.raw(),
        ).toBe(true);
      } finally {
        stream.close();
      }
    }

    for (const [kind, start] of [
      ['nginx', startNginx],
      ['Caddy', startCaddy],
    ] as const) {
      for (const processes of [1, 2]) {
        it(`${kind}, as documented, with ${processes === 1 ? 'one upstream' : 'two upstreams'}: sign-in, the dashboard, live events, the client's address`, async () => {
          const proxy = await start({
            dir: join(dir, `${kind}-${processes}`),
            certs,
            upstreams: upstreams(processes),
            port,
          });
          try {
            await servedThrough(proxy, processes);
          } finally {
            await proxy.stop();
          }
        });
      }
    }

    it('takes pushes from desktops through the proxy, checking its certificate, and says why one fails', async () => {
      const proxy = await startNginx({ dir: join(dir, 'nginx-push'), certs, upstreams: upstreams(2), port });
      try {
        const cookie = await signIn();
        const made = await request(`/api/workspaces/${organizationId}/keys`, {
          method: 'POST',
          headers: { cookie, origin: publicUrl },
          body: { label: "Ada's laptop", pushOnly: true },
        });
        expect(made.status, made.body).toBe(201);
        const key = (JSON.parse(made.body) as { key: { key: string } }).key.key;
        const desk = await desktopDataDir(join(dir, 'desk'), [
          { id: 'ses_throughproxy0000000001', messages: [prompt('Fix the build'), answer('Done.')] },
        ]);
        const push = (to: string, env: NodeJS.ProcessEnv = {}) =>
          runCli(['push', '--to', to, '--key', key, '--data-dir', desk.dataDir], {
            SESSIONDESK_DATABASE_URL: '',
            ...env,
          });

        const untrusted = await push(publicUrl, { NODE_EXTRA_CA_CERTS: '' });
        expect(untrusted.code).toBe(1);
        expect(untrusted.stderr).toContain('certificate is not one this machine trusts');
        expect(untrusted.stderr).toContain('NODE_EXTRA_CA_CERTS');

        const otherName = await push(`https://127.0.0.1:${port}`, { NODE_EXTRA_CA_CERTS: certs.caFile });
        expect(otherName.code).toBe(1);
        expect(otherName.stderr).toContain('refused the address the request was sent to');
        expect(otherName.stderr).toContain('public URL');
        expect(otherName.stderr).not.toContain('does not let this key push');

        const plainHttp = await push(`http://localhost:${port}`, { NODE_EXTRA_CA_CERTS: certs.caFile });
        expect(plainHttp.code).toBe(1);
        expect(plainHttp.stderr).toContain('not Session Desk');

        const pushed = await push(publicUrl, { NODE_EXTRA_CA_CERTS: certs.caFile });
        expect(pushed.stderr).toBe('');
        expect(pushed.code).toBe(0);
        expect(pushed.stdout).toContain('pushed 1 session (2 new messages)');
        const there = await request(
          `/api/sessions/ses_throughproxy0000000001?organizationId=${organizationId}`,
          {
            headers: { cookie },
          },
        );
        expect(there.status, there.body).toBe(200);
      } finally {
        await proxy.stop();
      }
    });
  },
);
