import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { startCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import {
  seedPostgresCorpus,
  seedSqljsCorpus,
  unindexSessions,
  type BenchCorpus,
  type CorpusOptions,
} from './postgres-corpus.js';
import {
  ask,
  expect,
  latency,
  loadFor,
  requireCurrentBuild,
  rssOf,
  startBenchServer,
  type BenchServer,
  type Latency,
} from './postgres-client.js';
import { meter, type Costs } from './postgres-costs.js';
import { SHAPE, table } from './postgres-report.js';
import { LAST_MARKER, QUERIES, SEED_EMAIL, SEED_PASSWORD } from './search-corpus.js';

/**
 * `npm run bench:postgres`: one corpus served by `sessiondesk serve` from sql.js (a data
 * directory) and from PostgreSQL (`--database`), each a real process over HTTP on 127.0.0.1,
 * measured side by side: list pages, a ~10 MB session read as the dashboard reads it, search,
 * follow-ups from 32 sessions at once, and the list and follow-ups again with two processes on
 * one database. See bench/README.md; results go to bench/postgres-results.json and stdout.
 */

const { values: flags } = parseArgs({
  options: {
    gb: { type: 'string', default: '0.15' },
    'small-sessions': { type: 'string', default: '2000' },
    'huge-mb': { type: 'string', default: '165' },
    samples: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '5' },
    out: { type: 'string', default: fileURLToPath(new URL('./postgres-results.json', import.meta.url)) },
  },
});

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} must be a positive number, not "${raw}"`);
  return value;
}

const options = {
  gb: positive('gb', flags.gb),
  smallSessions: Math.round(positive('small-sessions', flags['small-sessions'])),
  hugeMB: positive('huge-mb', flags['huge-mb']),
  samples: Math.round(positive('samples', flags.samples)),
  seconds: positive('seconds', flags.seconds),
};
const { FOLLOW_UP_SESSIONS, LIST_CLIENTS, DASHBOARD_PAGE } = SHAPE;
// Follow-ups on one process, then on two (other sessions: a run belongs to the process that
// runs it), and the sessions whose titles change before list reads.
if (options.smallSessions < 2 * FOLLOW_UP_SESSIONS + LIST_CLIENTS)
  throw new Error(`--small-sessions must be at least ${2 * FOLLOW_UP_SESSIONS + LIST_CLIENTS}`);
const MB = 1024 * 1024;

const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);

const FIRST_PAGE = '/api/sessions?limit=50';
const FILTERED_PAGE = '/api/sessions?limit=50&status=failed';

/**
 * A list page as read after any change: a title changed first (not timed), so that neither
 * server answers from a cache (sql.js keeps list pages until a session changes; a team server
 * keeps none).
 */
async function listAfterChange(
  server: BenchServer,
  path: string,
  churnId: string,
  n: number,
): Promise<number> {
  await expect(server, `/api/sessions/${churnId}`, { method: 'PATCH', body: { title: `Churn ${n}` } });
  return (await expect(server, path)).ms;
}

async function listSamples(server: BenchServer, path: string, churnId: string): Promise<Latency> {
  const samples: number[] = [];
  for (let n = 0; n < options.samples; n += 1) samples.push(await listAfterChange(server, path, churnId, n));
  return latency(samples);
}

async function repeatedList(server: BenchServer): Promise<Latency> {
  await expect(server, FIRST_PAGE);
  const samples: number[] = [];
  for (let n = 0; n < options.samples; n += 1) samples.push((await expect(server, FIRST_PAGE)).ms);
  return latency(samples);
}

/** A transcript as the dashboard reads it: opened at its last page, and read through page by page. */
async function readLargeSession(server: BenchServer, id: string, total: number) {
  const messages = `/api/sessions/${id}/messages`;
  const open: number[] = [];
  for (let n = 0; n < Math.max(5, Math.round(options.samples / 4)); n += 1) {
    open.push(
      (
        await expect(
          server,
          `${messages}?after=${Math.max(0, total - DASHBOARD_PAGE)}&limit=${DASHBOARD_PAGE}`,
        )
      ).ms,
    );
  }
  const whole: number[] = [];
  let bytes = 0;
  for (let run = 0; run < 5; run += 1) {
    const started = performance.now();
    bytes = 0;
    let read = 0;
    for (let after = 0; ;) {
      const answer = await expect(server, `${messages}?after=${after}&limit=${DASHBOARD_PAGE}`);
      bytes += answer.body.length;
      const page = JSON.parse(answer.body) as { messages: unknown[]; nextAfter?: number };
      read += page.messages.length;
      if (page.nextAfter === undefined || page.messages.length === 0) break;
      after = page.nextAfter;
    }
    if (read !== total) throw new Error(`${server.name}: read ${read} messages of ${total}`);
    whole.push(performance.now() - started);
  }
  return { open: latency(open), wholeMs: latency(whole).p50Ms, jsonMB: bytes / MB };
}

/**
 * A session read whole, as `GET /api/sessions/{id}` gives it (the spec's get, every message in
 * one answer: streamed when large): the time to its last byte, three times.
 */
async function readWholeSession(server: BenchServer, id: string, total: number) {
  const times: number[] = [];
  let bytes = 0;
  for (let run = 0; run < 3; run += 1) {
    const answer = await expect(server, `/api/sessions/${id}`);
    const { session } = JSON.parse(answer.body) as { session: { messages: unknown[] } };
    if (session.messages.length !== total)
      throw new Error(`${server.name}: got ${session.messages.length} messages of ${total}`);
    bytes = answer.body.length;
    times.push(answer.ms);
  }
  return { ms: latency(times).p50Ms, jsonMB: bytes / MB };
}

/**
 * Until a search finds the corpus's last message and says the index is complete, or null when
 * this server answers search with 503 (not on PostgreSQL yet). Bounded in time.
 */
async function searchReady(server: BenchServer, limitMs: number): Promise<string | null> {
  const until = performance.now() + limitMs;
  for (;;) {
    const answer = await ask(server, `/api/search?q=${LAST_MARKER}`);
    if (answer.status === 503) return answer.body;
    if (answer.status !== 200)
      throw new Error(`${server.name}: search answered ${answer.status}: ${answer.body}`);
    // The last message found is not enough: a team server catches up in no particular order.
    const { hits, indexing } = JSON.parse(answer.body) as {
      hits: unknown[];
      indexing: { complete: boolean };
    };
    if (hits.length > 0 && indexing.complete) return null;
    if (performance.now() > until)
      throw new Error(`${server.name}: the index did not catch up in ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Every query SEARCH_ROUNDS times (after one not counted): all of them, and each kind apart.
 * Ten queries of a kind make 100 samples, so that its p99 is not simply its slowest query.
 */
const SEARCH_ROUNDS = 10;

async function searchSamples(server: BenchServer): Promise<Latency & { kinds: Record<string, Latency> }> {
  const samples: number[] = [];
  const kinds: Record<string, Latency> = {};
  for (const [kind, queries] of Object.entries(QUERIES)) {
    const ofKind: number[] = [];
    for (const query of queries) {
      const path = `/api/search?q=${encodeURIComponent(query)}`;
      await expect(server, path);
      for (let n = 0; n < SEARCH_ROUNDS; n += 1) ofKind.push((await expect(server, path)).ms);
    }
    kinds[kind] = latency(ofKind);
    samples.push(...ofKind);
  }
  return { ...latency(samples), kinds };
}

async function messageCounts(server: BenchServer, ids: string[]): Promise<number> {
  let sum = 0;
  for (const id of ids) {
    const page = JSON.parse((await expect(server, `/api/sessions/${id}/messages?after=0&limit=1`)).body) as {
      total: number;
    };
    sum += page.total;
  }
  return sum;
}

/** The database the bench's PostgreSQL servers use, for what a request costs it. */
let database: { admin: postgres.Sql; clusterDir: string } | undefined;

/**
 * `load` measured with what it costs (postgres-costs.ts): the servers' CPU, and for a team
 * server the database's CPU, statements and transactions, per request. The database's
 * transaction counts reach its statistics up to a second late: a pause before and after.
 */
async function metered<T extends { count: number }>(
  servers: BenchServer[],
  load: () => Promise<T>,
): Promise<T & { costs: Costs }> {
  const onDatabase = servers.every((s) => s.name.startsWith('PostgreSQL')) ? database : undefined;
  const settle = () => new Promise((resolve) => setTimeout(resolve, onDatabase ? 1500 : 0));
  await settle();
  const costs = await meter(
    servers.map((s) => s.pid),
    onDatabase,
  );
  const result = await load();
  await settle();
  return { ...result, costs: await costs.stop(result.count) };
}

/** Follow-ups (the API's way to add a message) to 32 sessions at once, each session always on one process. */
async function followUps(servers: BenchServer[], ids: string[]) {
  const serverOf = (i: number) => servers[i % servers.length] as BenchServer;
  const before = await messageCounts(servers[0] as BenchServer, ids);
  const load = await metered(servers, () =>
    loadFor(options.seconds, ids.length, 200_000, async (i, n) => {
      const answer = await expect(serverOf(i), `/api/sessions/${ids[i]}/messages`, {
        method: 'POST',
        as: 'person',
        body: { content: `Follow-up ${n}: also cover the timeout path` },
        expected: 201,
      });
      return answer.ms;
    }),
  );
  const after = await messageCounts(servers[0] as BenchServer, ids);
  return { ...load, messagesPerSecond: ((after - before) / load.count) * load.perSecond };
}

/** Eight clients reading the first page after a change, spread over the processes. */
function listUnderLoad(servers: BenchServer[], churnIds: string[]) {
  return metered(servers, () =>
    loadFor(options.seconds, LIST_CLIENTS, 100_000, (client, n) =>
      listAfterChange(
        servers[client % servers.length] as BenchServer,
        FIRST_PAGE,
        churnIds[client] as string,
        n,
      ),
    ),
  );
}

const memory = (server: BenchServer) => rssOf(server.pid);

/**
 * The throw-away cluster runs without fsync, which the seeding keeps; the servers measured
 * beside sql.js, which fsyncs every write, get a PostgreSQL as durable as a real one, its
 * seeded pages already written out, and restarted with pg_stat_statements, which counts the
 * statements each request costs. Answers the database's size.
 */
async function durable(cluster: PostgresCluster, url: string): Promise<number> {
  const admin = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await admin`ALTER SYSTEM SET fsync = on`;
    await admin`ALTER SYSTEM SET full_page_writes = on`;
    await admin`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`;
    await admin`CHECKPOINT`;
  } finally {
    await admin.end();
  }
  await cluster.halt();
  await cluster.resume();
  const after = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const [row] =
      await after`SELECT current_setting('fsync') AS fsync, current_setting('full_page_writes') AS fpw`;
    if (row?.fsync !== 'on' || row.fpw !== 'on')
      throw new Error('PostgreSQL did not restart with fsync = on');
    await after`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    return Number((await after`SELECT pg_database_size(current_database()) AS bytes`)[0]?.bytes);
  } finally {
    await after.end();
  }
}

async function main(): Promise<void> {
  requireCurrentBuild();
  const work = mkdtempSync(join(tmpdir(), 'sessiondesk-bench-pg-'));
  let cluster: PostgresCluster | undefined;
  const servers: BenchServer[] = [];
  let cleaning: Promise<void> | undefined;
  // The servers, the cluster (a daemon of its own) and the folder go also on Ctrl-C.
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const server of servers.reverse()) await server.serve.stop().catch(() => undefined);
      await database?.admin.end().catch(() => undefined);
      // The folder before the cluster: a seeding cut short by Ctrl-C may throw from its driver
      // once the cluster is gone, ending this process before anything after.
      rmSync(work, { recursive: true, force: true });
      await cluster?.stop().catch((err: unknown) => progress(`the cluster did not stop: ${String(err)}`));
    })());
  const interrupted = (signal: NodeJS.Signals) => {
    progress(`${signal}: stopping the servers and the cluster`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const corpusOptions: CorpusOptions = {
      gb: options.gb,
      smallSessions: options.smallSessions,
      hugeMB: options.hugeMB,
      progress,
    };
    progress(`seeding ${options.gb} GB and ${options.smallSessions} small sessions into sql.js`);
    const sqljsDir = join(work, 'sqljs');
    const sqljsCorpus = await seedSqljsCorpus(sqljsDir, corpusOptions);
    progress(`  sql.js: ${(sqljsCorpus.seedMs / 1000).toFixed(1)} s`);

    cluster = await startCluster();
    const url = await cluster.createDatabase('bench');
    progress('seeding the same into PostgreSQL');
    const pgCorpus = await seedPostgresCorpus(url, corpusOptions);
    progress(
      `  PostgreSQL: ${(pgCorpus.seedMs / 1000).toFixed(1)} s, of which ${(pgCorpus.indexBuildMs / 1000).toFixed(1)} s building the search index`,
    );
    // A tenth of the corpus's sessions (not the huge one) out of the search index, for the
    // server's catch-up to index again as it starts: the catch-up's rate.
    const unindexed = pgCorpus.written.slice(1).filter((_, i) => i % 10 === 0);
    await unindexSessions(
      url,
      unindexed.map((s) => s.id),
    );
    const catchUpMB = unindexed.reduce((sum, s) => sum + s.bytes, 0) / MB;
    const databaseBytes = await durable(cluster, url);
    database = { admin: postgres(url, { max: 1, onnotice: () => undefined }), clusterDir: cluster.dir };

    const account = (corpus: BenchCorpus) => ({
      key: corpus.apiKey,
      organizationId: corpus.organizationId,
      email: SEED_EMAIL,
      password: SEED_PASSWORD,
    });
    // Each server indexes alone: sql.js first, then the team server catches up, timed from its start.
    const searchLimitMs = Math.max(120_000, options.gb * 1_200_000);
    const sqljs = await startBenchServer('sql.js', ['--data-dir', sqljsDir], account(sqljsCorpus));
    servers.push(sqljs);
    progress('search: waiting for sql.js to index the corpus');
    const sqljsSearchOff = await searchReady(sqljs, searchLimitMs);
    progress(`search: waiting for PostgreSQL to catch up with ${catchUpMB.toFixed(0)} MB not indexed`);
    const catchUpStarted = performance.now();
    const pg = await startBenchServer(
      'PostgreSQL',
      ['--data-dir', join(work, 'pg-1'), '--database', url],
      account(pgCorpus),
    );
    servers.push(pg);
    const searchOff = { sqljs: sqljsSearchOff, postgres: await searchReady(pg, searchLimitMs) };
    const catchUp = { mb: catchUpMB, seconds: (performance.now() - catchUpStarted) / 1000 };
    progress(`  ${(catchUp.mb / catchUp.seconds).toFixed(2)} MB/s`);
    const side = async <T>(measure: (server: BenchServer, corpus: BenchCorpus) => Promise<T>) => ({
      sqljs: await measure(sqljs, sqljsCorpus),
      postgres: await measure(pg, pgCorpus),
    });
    const rss = () => ({ sqljs: memory(sqljs), postgres: memory(pg) });
    // The last small sessions take the titles changed before each list read; the first, the follow-ups.
    const churn = (corpus: BenchCorpus) => corpus.smallIds.slice(-LIST_CLIENTS);

    const afterStart = rss();

    progress('list pages');
    const listFirst = await side((s, c) => listSamples(s, FIRST_PAGE, churn(c)[0] as string));
    const listFiltered = await side((s, c) => listSamples(s, FILTERED_PAGE, churn(c)[0] as string));
    const listRepeated = await side((s) => repeatedList(s));
    const afterList = rss();

    // The huge session is the first written; the ~10 MB one is of the corpus's own sizes.
    const large = (corpus: BenchCorpus) =>
      corpus.written
        .slice(1)
        .reduce((best, s) => (Math.abs(s.bytes - 10 * MB) < Math.abs(best.bytes - 10 * MB) ? s : best));
    const huge = (corpus: BenchCorpus) => corpus.written[0] as BenchCorpus['written'][number];
    progress(
      `the ~10 MB session (${(large(pgCorpus).bytes / MB).toFixed(1)} MB), paged as the dashboard pages`,
    );
    const largeSession = await side((s, c) => readLargeSession(s, large(c).id, large(c).messages));
    const afterLarge = rss();
    progress(
      `the huge session (${(huge(pgCorpus).bytes / MB).toFixed(0)} MB, ${huge(pgCorpus).messages} messages): paged, and whole`,
    );
    const hugeSession = await side(async (s, c) => ({
      ...(await readLargeSession(s, huge(c).id, huge(c).messages)),
      whole: await readWholeSession(s, huge(c).id, huge(c).messages),
    }));
    const afterHuge = rss();

    progress('search');
    const search = {
      sqljs: searchOff.sqljs === null ? await searchSamples(sqljs) : null,
      postgres: searchOff.postgres === null ? await searchSamples(pg) : null,
    };
    const afterSearch = rss();

    progress(`follow-ups to ${FOLLOW_UP_SESSIONS} sessions at once, ${options.seconds} s each`);
    const followUp = await side((s, c) => followUps([s], c.smallIds.slice(0, FOLLOW_UP_SESSIONS)));
    const listLoad = await side((s, c) => listUnderLoad([s], churn(c)));
    const afterAppends = rss();

    progress('a second PostgreSQL process on the same database');
    const pg2 = await startBenchServer(
      'PostgreSQL 2',
      ['--data-dir', join(work, 'pg-2'), '--database', url],
      account(pgCorpus),
    );
    servers.push(pg2);
    // Sessions not followed up before: a run of the first process's holds its own sessions.
    const fresh = pgCorpus.smallIds.slice(FOLLOW_UP_SESSIONS, 2 * FOLLOW_UP_SESSIONS);
    const twoProcesses = {
      followUp: await followUps([pg, pg2], fresh),
      list: await listUnderLoad([pg, pg2], churn(pgCorpus)),
      rss: [memory(pg), memory(pg2)],
    };

    const results = {
      measuredAt: new Date().toISOString(),
      commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
      loadAverage: loadavg(),
      options,
      corpus: {
        sessions: pgCorpus.written.length + pgCorpus.smallIds.length,
        transcriptMB: pgCorpus.transcriptBytes / MB,
        largeSessionMB: large(pgCorpus).bytes / MB,
        largeSessionMessages: large(pgCorpus).messages,
        hugeSessionMB: huge(pgCorpus).bytes / MB,
        hugeSessionMessages: huge(pgCorpus).messages,
        failedSessions: pgCorpus.failed,
        seedSeconds: { sqljs: sqljsCorpus.seedMs / 1000, postgres: pgCorpus.seedMs / 1000 },
        postgresIndexBuildSeconds: pgCorpus.indexBuildMs / 1000,
        postgresDatabaseMB: databaseBytes / MB,
      },
      listFirst,
      listFiltered,
      listRepeated,
      largeSession,
      hugeSession,
      search,
      searchNotMeasured: searchOff,
      catchUp,
      followUp,
      listLoad,
      twoProcesses,
      rss: {
        'after start': afterStart,
        'after the lists': afterList,
        'after the 10 MB session': afterLarge,
        'after the huge session': afterHuge,
        'after search': afterSearch,
        'after the follow-ups': afterAppends,
      },
    };
    writeFileSync(flags.out, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${table(results)}\n`);
  } finally {
    await cleanUp();
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
  }
}

await main();
