// `sessiondesk serve --database`: the same API over a team server's PostgreSQL, as real processes
// over a real cluster: first-run setup, a session an agent runs, and a second server process
// on another data directory answering the same data.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FullSessionResponseSchema,
  ListSessionsResponseSchema,
  MessagesPageResponseSchema,
} from '../../src-shared/sessions.js';
import { SearchResponseSchema } from '../../src-shared/search.js';
import { runCli } from '../helpers/cli.js';
import { PASSWORD, useSandbox } from '../helpers/cli-extra.js';
import { startCluster } from '../helpers/postgres-cluster.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { openEventStream } from '../helpers/events.js';
import { firstOwner, send } from '../helpers/team-server.js';
import { until } from '../helpers/until.js';

describe('sessiondesk serve --database', { ...requireTools(postgresTool()), timeout: 180_000 }, () => {
  const pg = usePostgres();
  const sandbox = useSandbox();
  const fast = { SESSIONDESK_DEMO_PACE_MS: '5' };

  it('serves the API from PostgreSQL; a second process on another data directory answers the same data', async () => {
    const database = await pg.freshDatabase();
    const one = await sandbox.serveWithEnv(
      ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database],
      fast,
    );
    // Printed after the URL line the helper waits for, so it may arrive a moment later.
    await expect
      .poll(() => one.stdout())
      .toMatch(/Database: PostgreSQL "fresh_\d+" at 127\.0\.0\.1:\d+ as postgres/u);

    const { cookie, organizationId } = await firstOwner(one);
    const keyResponse = await send(one.url, `/api/workspaces/${organizationId}/keys`, {
      method: 'POST',
      cookie,
      body: { label: 'script' },
    });
    expect(keyResponse.status, await keyResponse.clone().text()).toBe(201);
    const { key } = ((await keyResponse.json()) as { key: { key: string } }).key;

    // Another process, its own data directory, the same database; a client of it watches live.
    const two = await sandbox.serveWithEnv(['--port', '0', '--data-dir', sandbox.dataDir()], {
      ...fast,
      SESSIONDESK_DATABASE_URL: database,
    });
    const stream = await openEventStream(`${two.url}/api/events?organizationId=${organizationId}`, {
      'x-api-key': key,
    });
    expect(stream.response.status).toBe(200);

    // A session the (simulated) agent works through on the first, every message kept in PostgreSQL.
    const created = await send(one.url, '/api/sessions', {
      method: 'POST',
      cookie,
      body: { organizationId, initialMessage: 'Fix the flaky test, please' },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = ((await created.json()) as { session: { id: string } }).session;
    const full = async (url: string) => {
      const r = await send(url, `/api/sessions/${id}?organizationId=${organizationId}`, { key });
      if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`);
      return FullSessionResponseSchema.parse(await r.json());
    };
    const done = await until(
      () => full(one.url),
      (s) => s.session.status !== 'active',
      60_000,
    );
    expect(done.session.status).toBe('completed');
    expect(done.session.messages.length).toBeGreaterThan(2);

    // The second process answers the same data.
    expect(await full(two.url)).toEqual(done);
    const list = ListSessionsResponseSchema.parse(
      await (await send(two.url, `/api/sessions?organizationId=${organizationId}`, { key })).json(),
    );
    expect(list.sessions.map((s) => s.id)).toEqual([id]);
    const page = MessagesPageResponseSchema.parse(
      await (
        await send(two.url, `/api/sessions/${id}/messages?organizationId=${organizationId}&limit=1`, { key })
      ).json(),
    );
    expect(page.messages).toEqual(done.session.messages.slice(0, 1));
    // The owner signs in on the second process with the account made on the first.
    const signIn = await send(two.url, '/api/auth/sign-in', {
      method: 'POST',
      body: { email: 'lead@example.com', password: PASSWORD },
    });
    expect(signIn.status).toBe(200);

    // The second process's client saw the session made on the first, message by message; a
    // follow-up too large for a notification is read from its transcript.
    const events = () =>
      stream.events.map((e) => e.data as { type: string; sessionId?: string; index?: number });
    await until(
      async () => events(),
      (seen) =>
        seen.filter((e) => e.type === 'message.added' && e.sessionId === id).length ===
        done.session.messages.length,
      30_000,
    );
    expect(events().find((e) => e.type === 'session.created')?.sessionId).toBe(id);
    const long = `Now the docs too. ${'x'.repeat(20_000)}`;
    const followUp = await send(one.url, `/api/sessions/${id}/messages`, {
      method: 'POST',
      cookie,
      body: { content: long },
    });
    expect(followUp.status, await followUp.clone().text()).toBe(201);
    const relayed = await until(
      async () =>
        stream.events.map((e) => e.data as { type: string; message?: { message?: { content?: unknown } } }),
      (seen) => seen.some((e) => e.type === 'message.added' && e.message?.message?.content === long),
      30_000,
    );
    expect(
      relayed.filter((e) => e.type === 'message.added' && e.message?.message?.content === long),
    ).toHaveLength(1);
    await stream.close();

    // Search through the second process finds what was written through the first: the prompt,
    // and the follow-up as soon as it was answered, with nothing left to index.
    const search = async (q: string) => {
      const r = await send(
        two.url,
        `/api/search?organizationId=${organizationId}&q=${encodeURIComponent(q)}`,
        {
          key,
        },
      );
      expect(r.status, await r.clone().text()).toBe(200);
      return SearchResponseSchema.parse(await r.json());
    };
    // The demo agent repeats what it was asked in its answers: those are found too.
    const flaky = await search('flaky');
    expect(flaky.indexing).toEqual({ complete: true, pendingSessions: 0 });
    expect(flaky.hits.map((h) => [h.sessionId, h.messageIndex])).toContainEqual([id, 0]);
    expect(flaky.hits.find((h) => h.messageIndex === 0)?.snippet).toBe('Fix the flaky test, please');
    const docs = await search('"the docs too"');
    expect(docs.hits.map((h) => [h.sessionId, h.messageIndex])).toContainEqual([
      id,
      done.session.messages.length,
    ]);
    expect(new Set([...flaky.hits, ...docs.hits].map((h) => h.sessionId))).toEqual(new Set([id]));
    expect(await one.stop()).toBe(0);
    expect(await two.stop()).toBe(0);
  });

  it('leaves a run to the process that runs it, and marks it failed once that process is gone', async () => {
    const database = await pg.freshDatabase();
    // A slow agent on the first process: its run lasts while the second starts and looks.
    const one = await sandbox.serveWithEnv(
      ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database],
      {
        SESSIONDESK_DEMO_PACE_MS: '1000',
      },
    );
    const { cookie, organizationId } = await firstOwner(one);
    const created = await send(one.url, '/api/sessions', {
      method: 'POST',
      cookie,
      body: { organizationId, initialMessage: 'Take your time' },
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { session: { id: string } }).session;
    const session = async (url: string) =>
      FullSessionResponseSchema.parse(
        await (await send(url, `/api/sessions/${id}?organizationId=${organizationId}`, { cookie })).json(),
      ).session;
    await until(
      () => session(one.url),
      (s) => s.agentState === 'running',
      30_000,
    );

    // A second process starts, recovering what stopped runs left: this run is the first's.
    const two = await sandbox.serveWithEnv(
      ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database],
      fast,
    );
    const meanwhile = await session(two.url);
    expect(meanwhile.status).toBe('active');
    expect(meanwhile.agentState).toBe('running');

    // The first dies mid-run: the second notices within its sweep and closes the run off.
    await one.kill();
    const failed = await until(
      () => session(two.url),
      (s) => s.status === 'failed',
      30_000,
    );
    expect(failed.agentState).toBeUndefined();
    expect(JSON.stringify(failed.messages.at(-1))).toContain('stopped while the agent was running');
    // The session is the second's to continue now.
    const resumed = await send(two.url, `/api/sessions/${id}/messages`, {
      method: 'POST',
      cookie,
      body: { content: 'Go on' },
    });
    expect(resumed.status, await resumed.clone().text()).toBe(201);
    await until(
      () => session(two.url),
      (s) => s.status === 'completed',
      60_000,
    );
    expect(await two.stop()).toBe(0);
  });

  it('answers 503 while the database is down, and goes on with everything it had once it is back', async () => {
    // A cluster of its own: this test stops it.
    const cluster = await startCluster();
    sandbox.defer(() => cluster.stop());
    const database = await cluster.createDatabase('halting');
    const one = await sandbox.serveWithEnv(
      ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database],
      fast,
    );
    const { cookie, organizationId } = await firstOwner(one);
    const newSession = () =>
      send(one.url, '/api/sessions', {
        method: 'POST',
        cookie,
        body: { organizationId, initialMessage: 'Keep me' },
      });
    const created = await newSession();
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { session: { id: string } }).session;
    const list = () => send(one.url, `/api/sessions?organizationId=${organizationId}`, { cookie });
    await until(
      async () => ListSessionsResponseSchema.parse(await (await list()).json()).sessions,
      (sessions) => sessions[0]?.status === 'completed',
      30_000,
    );

    await cluster.halt();
    const down = await list();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    expect(await down.text()).toContain('The team database cannot be reached right now');
    expect((await newSession()).status).toBe(503);

    await cluster.resume();
    const back = await until(list, (response) => response.status === 200, 30_000);
    const sessions = ListSessionsResponseSchema.parse(await back.json()).sessions;
    expect(sessions.map((s) => [s.id, s.status])).toEqual([[id, 'completed']]);
    const again = await newSession();
    expect(again.status, await again.clone().text()).toBe(201);
    expect(await one.stop()).toBe(0);
  });

  it('makes its data directory when it is not there yet, private to its user', async () => {
    const dataDir = join(sandbox.dataDir(), 'new', 'server-a');
    const serve = await sandbox.serveWithEnv(
      ['--port', '0', '--data-dir', dataDir, '--database', pg.url()],
      {},
    );
    // It answers: signed out, but served.
    expect((await fetch(new URL('/api/auth/me', serve.url))).status).toBe(401);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(await serve.stop()).toBe(0);
  });

  it('counts failed sign-ins and bad API keys across processes: the limit holds on every one', async () => {
    const database = await pg.freshDatabase();
    const start = () =>
      sandbox.serveWithEnv(['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database], fast);
    const [one, two] = await Promise.all([start(), start()]);
    const { organizationId } = await firstOwner(one);
    const signIn = (url: string, password: string) =>
      send(url, '/api/auth/sign-in', {
        method: 'POST',
        body: { email: 'lead@example.com', password },
      });

    // Five failures lock the account: four on the first process, the fifth on the second.
    for (let i = 0; i < 4; i += 1) expect((await signIn(one.url, 'wrong password')).status).toBe(401);
    expect((await signIn(two.url, 'wrong password')).status).toBe(401);
    for (const url of [one.url, two.url]) {
      const refused = await signIn(url, PASSWORD);
      expect(refused.status, url).toBe(429);
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).toBeGreaterThan(14 * 60);
      expect(wait).toBeLessThanOrEqual(15 * 60);
    }

    // 30 bad API keys a minute from one client, spread over both processes; a 31st is refused.
    const badKey = (url: string, n: number) =>
      send(url, `/api/sessions?organizationId=${organizationId}`, {
        key: `sdk_${String(n).padStart(43, 'x')}`,
      });
    for (let n = 0; n < 29; n += 1) expect((await badKey(n % 2 ? one.url : two.url, n)).status).toBe(401);
    expect((await badKey(one.url, 29)).status).toBe(401);
    for (const url of [one.url, two.url]) {
      const refused = await badKey(url, 30);
      expect(refused.status, url).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await one.stop()).toBe(0);
    expect(await two.stop()).toBe(0);
  });

  it('refuses a URL that is not PostgreSQL’s before anything opens, and names a database it cannot reach', async () => {
    const dataDir = sandbox.dataDir();
    const wrong = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--database', 'mysql://db/x']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('must start with postgres://');
    const unreachable = await runCli(['serve', '--port', '0', '--data-dir', dataDir], {
      SESSIONDESK_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing',
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('"nothing" at 127.0.0.1:1');
    expect(unreachable.stderr).not.toContain('    at ');
    const demo = await runCli([
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--demo',
      '--database',
      pg.url(),
    ]);
    expect(demo.code).toBe(2);
  });
});
