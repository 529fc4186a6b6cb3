import { writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../src-main/seeded-random.js';
import { startCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { percentile } from './load.js';
import { median, round } from './report.js';
import {
  openPg,
  openPostgresJs,
  SCHEMA,
  type BenchRow,
  type DriverName,
  type DriverUnderTest,
} from './postgres-driver-adapters.js';

/**
 * `node ./bin/run-ts.js bench/postgres-drivers.ts`: node-postgres (`pg`) and postgres.js side
 * by side against one throw-away cluster (scripts/postgres-cluster.sh, fsync off) on this
 * machine, each driver with a database of its own holding the same rows: the queries the team
 * server's store will make most, a pool under 32 concurrent clients, and a server that goes away
 * and comes back. Timed rounds alternate the drivers' order, so neither always runs second on a
 * warmer server. Figures go to bench/postgres-drivers-results.json.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
const outFile = process.env.PG_BENCH_OUT ?? join(here, 'postgres-drivers-results.json');
const ROUNDS = 6;
const POOL_MAX = 10;
const CONCURRENT_CLIENTS = 32;

type Opener = (url: string, max: number) => Promise<DriverUnderTest>;
const OPENERS: Record<DriverName, Opener> = { pg: openPg, 'postgres.js': openPostgresJs };

interface Latency {
  p50: number;
  p99: number;
  count: number;
}

const random = seededRandom(7);
const WORKSPACES = ['org_a', 'org_b', 'org_c', 'org_d'];
let serial = 0;
const knownRows: Array<{ id: string; workspaceId: string; createdAt: string }> = [];

function newRow(): BenchRow {
  serial += 1;
  const row: BenchRow = {
    id: `ses_${serial.toString(36).padStart(8, '0')}${Math.floor(random() * 1e9).toString(36)}`,
    workspaceId: WORKSPACES[serial % WORKSPACES.length] as string,
    createdAt: new Date(Date.UTC(2026, 0, 1) + serial * 1000).toISOString(),
    title: `Session ${serial}: refactor the module that reads the settings`,
    body: Buffer.alloc(200, serial % 251),
    n: serial * 1024,
  };
  knownRows.push(row);
  return row;
}

const pick = () => knownRows[Math.floor(random() * knownRows.length)] as (typeof knownRows)[number];

async function timeEach(count: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(50, count); i++) await op(i);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await op(i);
    samples.push(performance.now() - started);
  }
  return samples;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: round(percentile(sorted, 50), 3),
    p99: round(percentile(sorted, 99), 3),
    count: sorted.length,
  };
}

/** Listens on a channel of the driver's own; the function returned is one NOTIFY heard back. */
async function listenForRoundTrips(driver: DriverUnderTest): Promise<() => Promise<void>> {
  const channel = `bench_${driver.name.replace(/\W/g, '')}`;
  const waiting = new Map<string, () => void>();
  await driver.listen(channel, (payload) => waiting.get(payload)?.());
  let sent = 0;
  return async () => {
    const payload = `${(sent += 1)}`;
    const heard = new Promise<void>((resolve) => waiting.set(payload, resolve));
    await driver.notify(channel, payload);
    await heard;
    waiting.delete(payload);
  };
}

interface PoolFigures {
  opsPerSecond: number;
  perOp: Latency;
  serverConnectionsSeen: number;
  errors: number;
}

/** CONCURRENT_CLIENTS callers share a pool of POOL_MAX, each running its lookups back to back. */
async function poolUnderLoad(url: string, open: Opener): Promise<PoolFigures> {
  const driver = await open(url, POOL_MAX);
  const samples: number[] = [];
  let errors = 0;
  const perClient = 150;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CLIENTS }, async () => {
      for (let i = 0; i < perClient; i++) {
        const t = performance.now();
        try {
          await driver.selectById(pick().id);
        } catch {
          errors += 1;
        }
        samples.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const seen = await driver.serverConnections();
  await driver.close();
  return {
    opsPerSecond: Math.round((CONCURRENT_CLIENTS * perClient * 1000) / elapsed),
    perOp: latency(samples),
    serverConnectionsSeen: seen,
    errors,
  };
}

/** 200 lookups issued at once on a single connection: pipelined, or one after the other. */
async function oneConnectionBurst(url: string, open: Opener): Promise<number> {
  const driver = await open(url, 1);
  await driver.selectById(pick().id);
  const started = performance.now();
  await Promise.all(Array.from({ length: 200 }, () => driver.selectById(pick().id)));
  const elapsed = performance.now() - started;
  await driver.close();
  return round(elapsed, 2);
}

async function bytesAndTypes(driver: DriverUnderTest): Promise<{ bytesRoundTrip: string; bigintAs: string }> {
  const row = {
    ...newRow(),
    body: Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7919) % 256)),
  };
  await driver.insertInTransaction(row);
  const back = await driver.selectById(row.id);
  const body = back?.body;
  const same = Buffer.isBuffer(body) && body.equals(row.body);
  return {
    bytesRoundTrip: same ? 'Buffer in, equal Buffer out (1 MiB)' : `differs: got ${typeof body}`,
    bigintAs: typeof back?.n,
  };
}

interface ReconnectFigures {
  queryWhileDown: string;
  msToFirstSuccessAfterReturn: number;
  failedQueriesAfterReturn: number;
  listenerHearsAfterReturn: boolean;
  backgroundErrors: string[];
}

/** Both drivers at once: the server stops (fast shutdown) while they hold connections, then returns. */
async function serverGoesAwayAndReturns(
  cluster: PostgresCluster,
  urls: Record<DriverName, string>,
): Promise<Record<DriverName, ReconnectFigures>> {
  const names = Object.keys(OPENERS) as DriverName[];
  const heard: Record<string, Set<string>> = {};
  const drivers = await Promise.all(
    names.map(async (name) => {
      const driver = await OPENERS[name](urls[name], 4);
      heard[name] = new Set();
      await driver.listen('comeback', (payload) => heard[name]?.add(payload));
      await Promise.all(Array.from({ length: 4 }, () => driver.selectById(pick().id)));
      return driver;
    }),
  );
  await cluster.halt();
  const whileDown = await Promise.all(
    drivers.map((d) =>
      d.selectById(pick().id).then(
        () => 'answered (?)',
        (err: unknown) => `fails: ${err instanceof Error ? err.message : String(err)}`.slice(0, 120),
      ),
    ),
  );
  await cluster.resume();
  const returned = performance.now();
  const result = {} as Record<DriverName, ReconnectFigures>;
  await Promise.all(
    drivers.map(async (driver, index) => {
      let failed = 0;
      for (;;) {
        try {
          await driver.selectById(pick().id);
          break;
        } catch {
          failed += 1;
          if (performance.now() - returned > 30_000) break;
        }
      }
      const msToFirstSuccess = round(performance.now() - returned, 1);
      // postgres.js subscribes again on its own; a pg Client stays closed: is anything heard?
      let listenerHears = false;
      for (let attempt = 0; attempt < 50 && !listenerHears; attempt++) {
        await driver.notify('comeback', `after-${attempt}`).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 100));
        listenerHears = (heard[driver.name]?.size ?? 0) > 0;
      }
      result[driver.name] = {
        queryWhileDown: whileDown[index] as string,
        msToFirstSuccessAfterReturn: msToFirstSuccess,
        failedQueriesAfterReturn: failed,
        listenerHearsAfterReturn: listenerHears,
        backgroundErrors: driver.backgroundErrors.slice(0, 4),
      };
      await driver.close().catch(() => undefined);
    }),
  );
  return result;
}

interface DriverFigures {
  insertInTransaction: Latency;
  insertBatchOf1000: Latency;
  selectByPrimaryKey: Latency;
  pageOf50: Latency;
  notifyRoundTrip: Latency;
  pool?: PoolFigures;
  burstOf200OnOneConnectionMs?: number;
  bytea?: { bytesRoundTrip: string; bigintAs: string };
  reconnect?: ReconnectFigures;
}

async function main(): Promise<void> {
  const cluster = await startCluster();
  const names = Object.keys(OPENERS) as DriverName[];
  const urls = {} as Record<DriverName, string>;
  type Sampled = 'insertOne' | 'batch' | 'select' | 'page' | 'notify';
  const samples = {} as Record<DriverName, Record<Sampled, number[]>>;
  try {
    for (const name of names) {
      urls[name] = await cluster.createDatabase(`bench_${name.replace(/\W/g, '')}`);
      samples[name] = { insertOne: [], batch: [], select: [], page: [], notify: [] };
    }
    await applySchemaAndSeed(urls, Array.from({ length: 20_000 }, newRow));
    // Each measure in ROUNDS slices, the drivers taking turns (and turns about who goes first),
    // so that the machine's load, which comes and goes, falls on both alike.
    const drivers = {} as Record<DriverName, DriverUnderTest>;
    const roundTrips = {} as Record<DriverName, () => Promise<void>>;
    for (const name of names) {
      drivers[name] = await OPENERS[name](urls[name], POOL_MAX);
      roundTrips[name] = await listenForRoundTrips(drivers[name]);
    }
    const measures: Array<[Sampled, number, (d: DriverUnderTest) => Promise<unknown>]> = [
      ['insertOne', 1500, (d) => d.insertInTransaction(newRow())],
      ['batch', 12, (d) => d.insertBatch(Array.from({ length: 1000 }, newRow))],
      ['select', 4000, (d) => d.selectById(pick().id)],
      ['page', 1500, (d) => d.page(pick().workspaceId, pick())],
      ['notify', 800, (d) => roundTrips[d.name]()],
    ];
    for (const [key, total, op] of measures) {
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of r % 2 === 0 ? names : [...names].reverse()) {
          samples[name][key].push(...(await timeEach(Math.ceil(total / ROUNDS), () => op(drivers[name]))));
        }
      }
    }
    for (const name of names) await drivers[name].close();
    const figures = {} as Record<DriverName, DriverFigures>;
    for (const name of names) {
      const s = samples[name];
      figures[name] = {
        insertInTransaction: latency(s.insertOne),
        insertBatchOf1000: latency(s.batch),
        selectByPrimaryKey: latency(s.select),
        pageOf50: latency(s.page),
        notifyRoundTrip: latency(s.notify),
      };
    }
    // Three tries each, taking turns; the median try (by throughput) is reported.
    const pools = { pg: [], 'postgres.js': [] } as Record<DriverName, PoolFigures[]>;
    const bursts = { pg: [], 'postgres.js': [] } as Record<DriverName, number[]>;
    for (let r = 0; r < 3; r++) {
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        pools[name].push(await poolUnderLoad(urls[name], OPENERS[name]));
        bursts[name].push(await oneConnectionBurst(urls[name], OPENERS[name]));
      }
    }
    for (const name of names) {
      figures[name].pool = [...pools[name]].sort((x, y) => x.opsPerSecond - y.opsPerSecond)[1] as PoolFigures;
      figures[name].burstOf200OnOneConnectionMs = median(bursts[name]);
    }
    for (const name of names) {
      const driver = await OPENERS[name](urls[name], 2);
      figures[name].bytea = await bytesAndTypes(driver);
      await driver.close();
    }
    const reconnect = await serverGoesAwayAndReturns(cluster, urls);
    for (const name of names) figures[name].reconnect = reconnect[name];
    const report = {
      ranAt: new Date().toISOString(),
      node: process.version,
      loadAverage: loadavg().map((l) => round(l, 2)),
      figures,
    };
    writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
    printReport(figures);
  } finally {
    await cluster.stop();
  }
}

async function applySchemaAndSeed(urls: Record<DriverName, string>, seed: BenchRow[]): Promise<void> {
  // Schema and seed rows through one driver for both databases: they are not what is measured.
  for (const url of Object.values(urls)) {
    const sql = postgres(url, { max: 1 });
    for (const statement of SCHEMA) await sql.unsafe(statement);
    await sql.end();
    const driver = await openPg(url, 2);
    for (let i = 0; i < seed.length; i += 1000) await driver.insertBatch(seed.slice(i, i + 1000));
    await driver.close();
  }
}

function printReport(figures: Record<DriverName, DriverFigures>): void {
  const [a, b] = ['pg', 'postgres.js'] as const;
  const ms = (l: Latency) => `${l.p50} / ${l.p99} ms`;
  const ratio = (x: number, y: number) => `${round(x / y, 2)}x`;
  const rows: Array<[string, string, string, string]> = [];
  const latencyRow = (
    label: string,
    key: 'insertInTransaction' | 'insertBatchOf1000' | 'selectByPrimaryKey' | 'pageOf50' | 'notifyRoundTrip',
  ) =>
    rows.push([
      label,
      ms(figures[a][key]),
      ms(figures[b][key]),
      ratio(figures[a][key].p50, figures[b][key].p50),
    ]);
  latencyRow('insert one row in a transaction, p50 / p99', 'insertInTransaction');
  latencyRow('insert 1,000 rows in one statement, p50 / p99', 'insertBatchOf1000');
  latencyRow('prepared SELECT by primary key, p50 / p99', 'selectByPrimaryKey');
  latencyRow('page of 50 rows (keyset), p50 / p99', 'pageOf50');
  latencyRow('LISTEN/NOTIFY round trip, p50 / p99', 'notifyRoundTrip');
  const pa = figures[a].pool as PoolFigures;
  const pb = figures[b].pool as PoolFigures;
  rows.push([
    `${CONCURRENT_CLIENTS} clients on a pool of ${POOL_MAX}: lookups/s`,
    `${pa.opsPerSecond}`,
    `${pb.opsPerSecond}`,
    ratio(pb.opsPerSecond, pa.opsPerSecond),
  ]);
  rows.push(['  per lookup p50 / p99', ms(pa.perOp), ms(pb.perOp), ratio(pa.perOp.p50, pb.perOp.p50)]);
  const ba = figures[a].burstOf200OnOneConnectionMs as number;
  const bb = figures[b].burstOf200OnOneConnectionMs as number;
  rows.push(['200 lookups at once on one connection', `${ba} ms`, `${bb} ms`, ratio(ba, bb)]);
  console.log(`| measure | ${a} | ${b} | ${a} ÷ ${b} |\n| --- | --- | --- | --- |`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  for (const name of [a, b]) {
    const { pool, bytea, reconnect } = figures[name];
    console.log(`\n${name}: ${JSON.stringify({ pool, bytea, reconnect }, null, 2)}`);
  }
}

await main();
