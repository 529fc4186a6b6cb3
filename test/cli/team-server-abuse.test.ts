// A team server several people share, as real `serve --database` processes over a real
// PostgreSQL behind a trusted proxy: what one client, member or key does cannot lock another out
// of their account, nor outlast a revocation on any process.
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { SessionResponseSchema } from '../../src-shared/sessions.js';
import { runCli, type ServeProcess } from '../helpers/cli.js';
import { PASSWORD, useSandbox } from '../helpers/cli-extra.js';
import { openEventStream } from '../helpers/events.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { firstOwner, send } from '../helpers/team-server.js';

/** The reverse proxy's address: the processes trust what it forwards. */
const PROXY = '127.0.0.2';

interface Answer {
  status: number;
  retryAfter: number;
  body: string;
}

/** A request as the proxy hands it on for `client`: from the proxy's address, naming the client. */
function throughProxy(serve: ServeProcess, client: string, path: string, body: unknown): Promise<Answer> {
  const url = new URL(serve.url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(url.port),
        localAddress: PROXY,
        method: 'POST',
        path,
        headers: {
          host: url.host,
          origin: serve.url,
          'content-type': 'application/json',
          'x-forwarded-for': client,
        },
      },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (out += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: Number(res.headers['retry-after'] ?? 0),
            body: out,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

describe(
  'a team server shared by people who may not trust each other',
  { ...requireTools(postgresTool()), timeout: 180_000 },
  () => {
    const pg = usePostgres();
    const sandbox = useSandbox();

    /** Two processes on a fresh database behind one trusted proxy, and the first owner. */
    async function twoProcesses() {
      const database = await pg.freshDatabase();
      const serve = () =>
        sandbox.serveWithEnv(
          ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database, '--trust-proxy', PROXY],
          {},
        );
      const [one, two] = await Promise.all([serve(), serve()]);
      const owner = await firstOwner(one);
      return { one, two, ...owner };
    }

    const signIn = (serve: ServeProcess, client: string, email: string, password: string) =>
      throughProxy(serve, client, '/api/auth/sign-in', { email, password });

    it("one client's wrong passwords lock only that client out of the account; the owner's own client signs in on every process", async () => {
      const { one, two } = await twoProcesses();
      const owner = '198.51.100.10';
      const attacker = '203.0.113.1';
      // The owner signed in from their own address before.
      expect((await signIn(one, owner, 'lead@example.com', PASSWORD)).status).toBe(200);

      for (let i = 0; i < 5; i += 1) {
        expect((await signIn(i % 2 ? one : two, attacker, 'lead@example.com', 'wrong password')).status).toBe(
          401,
        );
      }
      for (const serve of [one, two]) {
        const refused = await signIn(serve, attacker, 'lead@example.com', PASSWORD);
        expect(refused.status, refused.body).toBe(429);
        expect(refused.retryAfter).toBeGreaterThan(14 * 60);
      }
      for (const serve of [one, two]) {
        const mine = await signIn(serve, owner, 'lead@example.com', PASSWORD);
        expect(mine.status, mine.body).toBe(200);
      }
      // A first sign-in from an address the account has not used is not refused either: one
      // client's failures are no one else's.
      expect((await signIn(two, '198.51.100.11', 'lead@example.com', PASSWORD)).status).toBe(200);
    });

    it('one client trying many accounts is refused on every account past 30 failures, and only that client', async () => {
      const { one, two } = await twoProcesses();
      const sprayer = '203.0.113.2';
      for (let i = 0; i < 30; i += 1) {
        const answer = await signIn(i % 2 ? one : two, sprayer, `someone${i}@example.com`, 'Password1');
        expect(answer.status, answer.body).toBe(401);
      }
      for (const serve of [one, two]) {
        const refused = await signIn(serve, sprayer, 'lead@example.com', PASSWORD);
        expect(refused.status, refused.body).toBe(429);
        expect(refused.retryAfter).toBeGreaterThan(14 * 60);
      }
      expect((await signIn(one, '198.51.100.10', 'lead@example.com', PASSWORD)).status).toBe(200);
    });

    it('many clients guessing one account: past its budget, only clients it signed in from before get in', async () => {
      const { one, two } = await twoProcesses();
      const owner = '198.51.100.10';
      expect((await signIn(two, owner, 'lead@example.com', PASSWORD)).status).toBe(200);
      // Twenty failures from five addresses, four each: no one address reaches its own limit.
      for (let n = 0; n < 20; n += 1) {
        const answer = await signIn(
          n % 2 ? one : two,
          `203.0.113.${10 + (n % 5)}`,
          'lead@example.com',
          `guess ${n}`,
        );
        expect(answer.status, answer.body).toBe(401);
      }
      // A new address is refused, whatever it sends, until the account's window ends...
      for (const serve of [one, two]) {
        const refused = await signIn(serve, '203.0.113.99', 'lead@example.com', PASSWORD);
        expect(refused.status, refused.body).toBe(429);
        expect(refused.retryAfter).toBeGreaterThan(14 * 60);
      }
      // ...and the owner, from where they signed in before, is not.
      for (const serve of [one, two]) {
        const mine = await signIn(serve, owner, 'lead@example.com', PASSWORD);
        expect(mine.status, mine.body).toBe(200);
      }
      // Other accounts are not touched.
      const other = await send(one.url, '/api/auth/sign-in', {
        method: 'POST',
        body: { email: 'nobody@example.com', password: 'x' },
      });
      expect(other.status).toBe(401);
    });

    describe('a credential ended on one process ends its live events on every process, before the next event', () => {
      type Stream = Awaited<ReturnType<typeof openEventStream>>;

      /** Two processes, the owner, a member, and a session to change. */
      async function teamWithMember() {
        const database = await pg.freshDatabase();
        const serve = () =>
          sandbox.serveWithEnv(['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database], {});
        const [one, two] = await Promise.all([serve(), serve()]);
        const { cookie, organizationId } = await firstOwner(one);
        const made = await runCli([
          'user',
          'create',
          '--email',
          'bob@example.com',
          '--name',
          'Bob',
          '--password',
          PASSWORD,
          '--database',
          database,
        ]);
        expect(made.code, made.stderr).toBe(0);
        const bobId = made.stdout.trim();
        const added = await send(one.url, `/api/workspaces/${organizationId}/members`, {
          method: 'POST',
          cookie,
          body: { email: 'bob@example.com' },
        });
        expect(added.status, await added.clone().text()).toBe(201);
        const created = await send(one.url, '/api/sessions', {
          method: 'POST',
          cookie,
          body: { organizationId, initialMessage: 'Something to change' },
        });
        expect(created.status).toBe(201);
        const sessionId = SessionResponseSchema.parse(await created.json()).session.id;
        return { database, one, two, cookie, organizationId, bobId, sessionId };
      }

      type Team = Awaited<ReturnType<typeof teamWithMember>>;

      const signInOn = async (serve: ServeProcess, email: string) => {
        const answer = await send(serve.url, '/api/auth/sign-in', {
          method: 'POST',
          body: { email, password: PASSWORD },
        });
        expect(answer.status).toBe(200);
        return (answer.headers.get('set-cookie') ?? '').split(';')[0]!;
      };

      /** A stream of the workspace's events on the second process. */
      const streamOn = async (team: Team, headers: Record<string, string>) => {
        const stream = await openEventStream(
          `${team.two.url}/api/events?organizationId=${team.organizationId}`,
          headers,
        );
        expect(stream.response.status).toBe(200);
        return stream;
      };

      /** Changes the session's title on each process, right after the credential ended. */
      async function changeEverywhere(team: Team, title: string) {
        for (const serve of [team.two, team.one]) {
          const changed = await send(serve.url, `/api/sessions/${team.sessionId}`, {
            method: 'PATCH',
            cookie: team.cookie,
            body: { title: `${title} on ${serve === team.two ? 'two' : 'one'}` },
          });
          expect(changed.status).toBe(200);
        }
      }

      /** The stream is ended, and received nothing sent after its credential was. */
      async function endedBefore(stream: Stream, title: string) {
        await expect.poll(() => stream.isClosed(), { timeout: 2000 }).toBe(true);
        expect(JSON.stringify(stream.events)).not.toContain(title);
        await stream.close();
      }

      it('a member removed on one process', async () => {
        const team = await teamWithMember();
        const stream = await streamOn(team, { cookie: await signInOn(team.two, 'bob@example.com') });
        const removed = await send(
          team.one.url,
          `/api/workspaces/${team.organizationId}/members/${team.bobId}`,
          {
            method: 'DELETE',
            cookie: team.cookie,
          },
        );
        expect(removed.status).toBe(204);
        await changeEverywhere(team, 'After Bob left');
        await endedBefore(stream, 'After Bob left');
      });

      it('a key revoked on one process, in the dashboard and on the command line', async () => {
        const team = await teamWithMember();
        const makeKey = async () => {
          const made = await send(team.one.url, `/api/workspaces/${team.organizationId}/keys`, {
            method: 'POST',
            cookie: team.cookie,
            body: { label: 'script' },
          });
          expect(made.status).toBe(201);
          return ((await made.json()) as { key: { id: string; key: string } }).key;
        };
        const inDashboard = await makeKey();
        let stream = await streamOn(team, { 'x-api-key': inDashboard.key });
        const revoked = await send(
          team.one.url,
          `/api/workspaces/${team.organizationId}/keys/${inDashboard.id}`,
          {
            method: 'DELETE',
            cookie: team.cookie,
          },
        );
        expect(revoked.status).toBe(204);
        await changeEverywhere(team, 'After the key was revoked');
        await endedBefore(stream, 'After the key was revoked');

        const onCommandLine = await makeKey();
        stream = await streamOn(team, { 'x-api-key': onCommandLine.key });
        const cli = await runCli([
          'key',
          'revoke',
          '--workspace',
          team.organizationId,
          '--id',
          onCommandLine.id,
          '--database',
          team.database,
        ]);
        expect(cli.code, cli.stderr).toBe(0);
        await changeEverywhere(team, 'After the command line revoked it');
        await endedBefore(stream, 'After the command line revoked it');
      });

      it('a sign-out on one process', async () => {
        const team = await teamWithMember();
        const cookie = await signInOn(team.one, 'bob@example.com');
        const stream = await streamOn(team, { cookie });
        const out = await send(team.one.url, '/api/auth/sign-out', { method: 'POST', cookie });
        expect(out.status).toBe(204);
        await changeEverywhere(team, 'After Bob signed out');
        await endedBefore(stream, 'After Bob signed out');
      });
    });
  },
);
