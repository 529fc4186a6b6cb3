import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { format, resolveConfig } from 'prettier';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { buildApp } from '../src-main/server/app.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { Store } from '../src-main/store/store.js';
import {
  listeningUrl,
  probeLatency,
  runLoad,
  startBareServer,
  type BenchRequest,
  type LoadResult,
  type ProbeResult,
} from './load.js';
import { RssSampler } from './memory.js';
import {
  formatResults,
  MB,
  median,
  round,
  type BenchResults,
  type DatasetResult,
  type ScenarioResult,
  type TargetResult,
} from './report.js';
import { randomGenerator, seedWorkspace, timePreview, type SeededWorkspace } from './seed.js';

/**
 * `npm run bench`: seeds realistic data with the product's own store code, measures
 * start-up, snapshots, memory and the HTTP API under load, and compares with targets.
 * Everything runs in this process against 127.0.0.1; see bench/README.md.
 */

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
  }
  return value;
}

const options = {
  seconds: envInt('BENCH_SECONDS', 10, 1),
  connections: envInt('BENCH_CONNECTIONS', 32, 1),
  fullListConnections: envInt('BENCH_FULL_LIST_CONNECTIONS', 1, 1),
  sessions: envInt('BENCH_SESSIONS', 10_000, 100),
  messagesPerSession: envInt('BENCH_MESSAGES', 20, 2),
  largeSessions: envInt('BENCH_LARGE_SESSIONS', 100_000, 100),
  largeMessagesPerSession: envInt('BENCH_LARGE_MESSAGES', 2, 2),
  journalMB: envInt('BENCH_JOURNAL_MB', 50, 1),
  startupRuns: envInt('BENCH_STARTUP_RUNS', 3, 1),
};
const outFile = process.env.BENCH_OUT ?? fileURLToPath(new URL('./results.json', import.meta.url));

/** Sessions are spread over the same 90 days in both data sets. */
const SPAN_DAYS = 90;
/** Distinct sessions each GET / PATCH scenario rotates over. */
const ROTATION = 2_000;
const JOURNAL_WRITES_PER_ROUND = 2_000;
const JOURNAL_FILL_LIMIT_MS = 180_000;

/**
 * Before each phase that measures the server, the garbage of the phases before it (seeding
 * writes hundreds of MB of generated JSON) is collected, when `npm run bench` gave node
 * --expose-gc, so that neither its memory nor its collection is counted against the server.
 */
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);

const storeOptions = (dataDir: string) => ({ dataDir, clock: systemClock, logger: silentLogger });

async function timedOpen(dataDir: string): Promise<{ store: Store; ms: number }> {
  const started = performance.now();
  const store = await Store.open(storeOptions(dataDir));
  return { store, ms: performance.now() - started };
}

function shuffledSample<T>(items: T[], count: number, seed: number): T[] {
  const random = randomGenerator(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, count);
}

function datasetResult(seeded: SeededWorkspace, sessions: number, messagesPerSession: number): DatasetResult {
  return {
    sessions,
    messagesPerSession,
    messages: seeded.messages,
    messageJsonMB: round(seeded.messageBytes / MB),
    databaseMB: round(seeded.snapshot.bytes / MB),
    seedSeconds: round(seeded.seedMs / 1000),
  };
}

async function startApp(store: Store, cacheBytes?: number): Promise<{ app: FastifyInstance; url: string }> {
  const config = { allowedHosts: [], ...(cacheBytes === undefined ? {} : { cacheBytes }) };
  const app = await buildApp({ store, clock: systemClock, config });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: listeningUrl(app) };
}

/** One request before the load, so a wrong setup fails loudly instead of as 100% non-2xx. */
async function expectOk(
  url: string,
  request: BenchRequest,
  headers: Record<string, string>,
): Promise<string> {
  const response = await fetch(url + request.path, {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`${request.method} ${request.path} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return text;
}

/** The list answers what the scenarios assume; a function of its own so the parsed list can be freed. */
async function checkLists(url: string, auth: Record<string, string>): Promise<void> {
  const page = JSON.parse(await expectOk(url, { method: 'GET', path: '/api/sessions?limit=50' }, auth)) as {
    sessions: unknown[];
    nextCursor?: string;
  };
  if (page.sessions.length !== 50 || page.nextCursor === undefined) {
    throw new Error('the list page did not return 50 sessions and a cursor');
  }
  const full = JSON.parse(await expectOk(url, { method: 'GET', path: '/api/sessions' }, auth)) as {
    sessions: unknown[];
  };
  if (full.sessions.length !== options.sessions) {
    throw new Error(`the full list returned ${full.sessions.length} sessions, not ${options.sessions}`);
  }
}

interface Scenario {
  key: string;
  label: string;
  url: string;
  requests: BenchRequest[];
  headers: Record<string, string>;
  connections: number;
  probeCount: number;
}

async function measure(scenario: Scenario): Promise<{ load: LoadResult; idle: ProbeResult }> {
  progress(`${scenario.label}: idle latency`);
  const idle = await probeLatency({
    url: scenario.url,
    requests: scenario.requests,
    headers: scenario.headers,
    count: scenario.probeCount,
    warmup: Math.min(50, scenario.probeCount),
    maxMs: 15_000,
  });
  progress(`${scenario.label}: ${scenario.connections} connections for ${options.seconds} s`);
  const load = await runLoad({
    url: scenario.url,
    requests: scenario.requests,
    headers: scenario.headers,
    connections: scenario.connections,
    seconds: options.seconds,
  });
  progress(
    `  ${Math.round(load.requestsPerSecond)} req/s, p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms, ` +
      `errors ${load.errors + load.timeouts}, non-2xx ${load.non2xx}`,
  );
  return { load, idle };
}

/** Which code was measured: the commit and any files changed on top of it. */
function sourceState(): { commit: string; changedFiles: string[] } {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return '';
    }
  };
  // Porcelain lines are "XY path": the status columns may start with a space.
  const changed = git('status', '--porcelain', '--', 'src-main', 'src-shared')
    .split('\n')
    .filter((line) => line.length > 3)
    .map((line) => line.slice(3));
  return { commit: git('rev-parse', '--short', 'HEAD').trim() || 'unknown', changedFiles: changed };
}

async function main(): Promise<number> {
  const loadBefore = loadavg()[0] ?? 0;
  // Now, not at the end: the modules measured were loaded at start.
  const source = sourceState();
  const sampler = new RssSampler(100);
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sessiondesk-bench-'));
    dirs.push(dir);
    return dir;
  };
  const removeDirs = () => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    removeDirs();
    process.exit(130);
  });
  const problems: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  try {
    // 1. The main data set.
    sampler.enter('seed');
    const smallDir = newDir();
    progress(`seeding ${options.sessions} sessions x ${options.messagesPerSession} messages in ${smallDir}`);
    const small = await seedWorkspace({
      dataDir: smallDir,
      sessions: options.sessions,
      messagesPerSession: options.messagesPerSession,
      spanDays: SPAN_DAYS,
      progress,
    });
    progress(`seeded in ${round(small.seedMs / 1000)} s; database ${round(small.snapshot.bytes / MB)} MB`);

    // 2. Start-up: the snapshot alone, then the snapshot plus a journal to replay.
    collectGarbage();
    sampler.enter('start-up');
    const snapshotOnlyRuns: number[] = [];
    for (let i = 0; i < options.startupRuns; i += 1) {
      const { store, ms } = await timedOpen(smallDir);
      snapshotOnlyRuns.push(ms);
      await store.close({ snapshot: false });
    }
    progress(`start-up (snapshot only): ${snapshotOnlyRuns.map(Math.round).join(', ')} ms`);

    progress(`writing title updates until the journal holds ${options.journalMB} MB`);
    const fillStarted = performance.now();
    const writer = await Store.open({ ...storeOptions(smallDir), snapshotAfterBytes: 2 ** 30 });
    const writerRepos = createRepositories(writer.db);
    const journalStartBytes = writer.status().journalBytes;
    let records = 0;
    while (
      writer.status().journalBytes < options.journalMB * MB &&
      performance.now() - fillStarted < JOURNAL_FILL_LIMIT_MS
    ) {
      const pending: Promise<void>[] = [];
      for (let i = 0; i < JOURNAL_WRITES_PER_ROUND; i += 1) {
        const id = small.sessionIds[records % small.sessionIds.length] as string;
        const title = `Renamed while benchmarking start-up, revision ${records}`;
        pending.push(
          writer.write(() => writerRepos.sessions.update(id, { title }, systemClock.now().toISOString())),
        );
        records += 1;
      }
      await Promise.all(pending);
    }
    const journalBytes = writer.status().journalBytes;
    await writer.close({ snapshot: false });
    const fillSeconds = round((performance.now() - fillStarted) / 1000);
    progress(
      `journal: ${round(journalBytes / MB)} MB (${journalStartBytes} bytes before) from ${records} writes ` +
        `in ${fillSeconds} s`,
    );
    if (journalBytes < options.journalMB * MB) {
      problems.push(`the journal reached only ${round(journalBytes / MB)} MB in the time allowed`);
    }

    // Replaying can take long: repeat only while the runs so far took under 20 s in all.
    const journalRuns: number[] = [];
    let smallStore: Store;
    for (;;) {
      const opened = await timedOpen(smallDir);
      journalRuns.push(opened.ms);
      smallStore = opened.store;
      const spent = journalRuns.reduce((a, b) => a + b, 0);
      if (journalRuns.length >= options.startupRuns || spent > 20_000) break;
      await smallStore.close({ snapshot: false });
    }
    closers.push(() => smallStore.close({ snapshot: false }));
    progress(`start-up (with journal): ${journalRuns.map(Math.round).join(', ')} ms`);

    // 6. Snapshot of the main data set (this also empties the journal before the HTTP runs).
    collectGarbage();
    sampler.enter('snapshot');
    const snapshot = await smallStore.snapshot();
    progress(`snapshot: ${round(snapshot.bytes / MB)} MB, export ${Math.round(snapshot.exportMs)} ms`);

    // 3-4. The app and the bare route, side by side in this process.
    collectGarbage();
    sampler.enter('http');
    const main = await startApp(smallStore);
    closers.unshift(() => main.app.close());
    // The same store behind an app without its response caches: what a first read costs.
    const uncached = await startApp(smallStore, 0);
    closers.unshift(() => uncached.app.close());
    const auth = { 'x-api-key': small.apiKey };
    const rotation = shuffledSample(small.sessionIds, ROTATION, 42);
    const getRequests: BenchRequest[] = rotation.map((id) => ({
      method: 'GET',
      path: `/api/sessions/${id}`,
    }));
    const firstGet = getRequests[0] as BenchRequest;
    const sessionBytes = Buffer.byteLength(await expectOk(main.url, firstGet, auth));
    const bare = await startBareServer(sessionBytes);
    closers.unshift(() => bare.app.close());
    const bareBytes = Buffer.byteLength(await expectOk(bare.url, { method: 'GET', path: '/bare' }, {}));
    progress(`GET one session: ${sessionBytes} bytes; bare route: ${bareBytes} bytes`);

    await checkLists(main.url, auth);
    const patchRequests: BenchRequest[] = rotation.map((id, i) => ({
      method: 'PATCH',
      path: `/api/sessions/${id}`,
      body: JSON.stringify({ title: `Renamed under load ${i}` }),
    }));
    const jsonAuth = { ...auth, 'content-type': 'application/json' };
    await expectOk(main.url, patchRequests[0] as BenchRequest, jsonAuth);

    const c = options.connections;
    const scenarios: Scenario[] = [
      {
        key: 'bare',
        label: 'bare Fastify, same bytes',
        url: bare.url,
        requests: [{ method: 'GET', path: '/bare' }],
        headers: {},
        connections: c,
        probeCount: 500,
      },
      {
        key: 'getSession',
        label: 'GET /api/sessions/:id',
        url: main.url,
        requests: getRequests,
        headers: auth,
        connections: c,
        probeCount: 500,
      },
      {
        key: 'listPage',
        label: 'GET /api/sessions?limit=50',
        url: main.url,
        requests: [{ method: 'GET', path: '/api/sessions?limit=50' }],
        headers: auth,
        connections: c,
        probeCount: 500,
      },
      {
        key: 'getSessionUncached',
        label: 'GET /api/sessions/:id, no cache',
        url: uncached.url,
        requests: getRequests,
        headers: auth,
        connections: c,
        probeCount: 500,
      },
      {
        key: 'listPageUncached',
        label: 'GET /api/sessions?limit=50, no cache',
        url: uncached.url,
        requests: [{ method: 'GET', path: '/api/sessions?limit=50' }],
        headers: auth,
        connections: c,
        probeCount: 500,
      },
      {
        key: 'fullList',
        label: `GET /api/sessions (all ${options.sessions.toLocaleString('en-US')})`,
        url: main.url,
        requests: [{ method: 'GET', path: '/api/sessions' }],
        headers: auth,
        connections: options.fullListConnections,
        probeCount: 20,
      },
      {
        key: 'patch',
        label: 'PATCH /api/sessions/:id {title}',
        url: main.url,
        requests: patchRequests,
        headers: jsonAuth,
        connections: c,
        probeCount: 200,
      },
    ];
    const measured: { scenario: Scenario; load: LoadResult; idle: ProbeResult }[] = [];
    for (const scenario of scenarios) measured.push({ scenario, ...(await measure(scenario)) });

    const renamed = createRepositories(smallStore.db).sessions.find(rotation[0] as string);
    if (!renamed?.title.startsWith('Renamed under load')) problems.push('PATCH did not change the title');

    for (const close of closers.splice(0)) await close();
    removeDirs();

    // 5. The list page at ten times the sessions.
    sampler.enter('seed large');
    const largeDir = newDir();
    progress(
      `seeding ${options.largeSessions} sessions x ${options.largeMessagesPerSession} messages in ${largeDir}`,
    );
    const large = await seedWorkspace({
      dataDir: largeDir,
      sessions: options.largeSessions,
      messagesPerSession: options.largeMessagesPerSession,
      spanDays: SPAN_DAYS,
      progress,
    });
    progress(`seeded in ${round(large.seedMs / 1000)} s; database ${round(large.snapshot.bytes / MB)} MB`);
    collectGarbage();
    sampler.enter('http large');
    const largeOpen = await timedOpen(largeDir);
    closers.push(() => largeOpen.store.close({ snapshot: false }));
    const largeApp = await startApp(largeOpen.store, 0);
    closers.unshift(() => largeApp.app.close());
    const largeAuth = { 'x-api-key': large.apiKey };
    await expectOk(largeApp.url, { method: 'GET', path: '/api/sessions?limit=50' }, largeAuth);
    const largeScenario: Scenario = {
      key: 'listPageLarge',
      label: `GET /api/sessions?limit=50 at ${options.largeSessions.toLocaleString('en-US')}, no cache`,
      url: largeApp.url,
      requests: [{ method: 'GET', path: '/api/sessions?limit=50' }],
      headers: largeAuth,
      connections: c,
      probeCount: 500,
    };
    measured.push({ scenario: largeScenario, ...(await measure(largeScenario)) });
    for (const close of closers.splice(0)) await close();

    sampler.enter('previews');
    const previewMs: Record<string, number> = {};
    for (const [length, repeats] of [
      [1_000, 200],
      [10_000, 10],
      [30_000, 2],
    ] as const) {
      previewMs[length.toLocaleString('en-US')] = round(timePreview(length, repeats), 2);
    }
    progress(`makePreview: ${JSON.stringify(previewMs)} ms`);

    // 7-8. Results.
    const memory = sampler.report();
    const peakOf = (phases: string[]) => Math.max(0, ...phases.map((p) => memory.phases[p] ?? 0));
    // The server's phases only: seeding is this script generating data, many writes of 1,000
    // messages each, whose garbage is the script's (its peak is printed by phase all the same).
    const smallPeak = peakOf(['start-up', 'snapshot', 'http']);
    const largePeak = peakOf(['http large']);
    const smallRssRatio = smallPeak / snapshot.bytes;
    const largeRssRatio = largePeak / large.snapshot.bytes;
    const bareRps = measured[0]?.load.requestsPerSecond ?? Number.NaN;
    const http: ScenarioResult[] = measured.map(({ scenario, load, idle }) => ({
      key: scenario.key,
      label: scenario.label,
      load,
      idle: { ...idle, p50: round(idle.p50, 3), p90: round(idle.p90, 3), p99: round(idle.p99, 3) },
      vsBare: round(load.requestsPerSecond / bareRps, 3),
    }));
    for (const s of http) {
      const failed = s.load.errors + s.load.timeouts + s.load.non2xx + s.idle.failures;
      if (failed > 0) {
        problems.push(
          `${s.label}: ${s.load.errors} errors, ${s.load.timeouts} timeouts, ${s.load.non2xx} non-2xx ` +
            `(${JSON.stringify(s.load.statusCodes)}), ${s.idle.failures} failed idle requests`,
        );
      }
    }
    const byKey = (key: string): ScenarioResult => {
      const found = http.find((s) => s.key === key);
      if (!found) throw new Error(`no scenario ${key}`);
      return found;
    };
    const get = byKey('getSession');
    const getUncached = byKey('getSessionUncached');
    const listPage = byKey('listPage');
    const listUncached = byKey('listPageUncached');
    const listLarge = byKey('listPageLarge');
    const fullList = byKey('fullList');
    const patch = byKey('patch');
    // How a page scales is a matter of the query: compared without the cache at both sizes.
    const listRatio = listLarge.load.latencyMs.p50 / listUncached.load.latencyMs.p50;
    const idleLargeRatio = listLarge.idle.p50 / listUncached.idle.p50;
    const journalMedian = median(journalRuns);
    const targets: TargetResult[] = [
      {
        name: 'GET one session vs bare route',
        target: '>= 0.5x req/s',
        measured: `${get.vsBare.toFixed(2)}x (${Math.round(get.load.requestsPerSecond)} vs ${Math.round(bareRps)} req/s)`,
        note: `no cache: ${getUncached.vsBare.toFixed(2)}x`,
        pass: get.vsBare >= 0.5,
      },
      {
        name: 'List page of 50, p50',
        target: '< 5 ms',
        measured: `${listPage.load.latencyMs.p50} ms at ${c} connections`,
        note: `idle ${listPage.idle.p50.toFixed(2)} ms; no cache: ${listUncached.load.latencyMs.p50} ms`,
        pass: listPage.load.latencyMs.p50 < 5,
      },
      {
        name: `List page p50 at ${options.largeSessions.toLocaleString('en-US')} vs ${options.sessions.toLocaleString('en-US')}`,
        target: '<= 1.5x',
        measured: `${listRatio.toFixed(2)}x (${listLarge.load.latencyMs.p50} vs ${listUncached.load.latencyMs.p50} ms, no cache)`,
        note: `idle ${idleLargeRatio.toFixed(2)}x: ${listLarge.idle.p50.toFixed(2)} vs ${listUncached.idle.p50.toFixed(2)} ms`,
        pass: listRatio <= 1.5,
      },
      {
        name: 'Full list, p50',
        target: '< 150 ms',
        measured: `${fullList.load.latencyMs.p50} ms at ${fullList.load.connections} connection(s)`,
        pass: fullList.load.latencyMs.p50 < 150,
      },
      {
        name: 'PATCH throughput',
        target: '>= 2,000 req/s',
        measured: `${Math.round(patch.load.requestsPerSecond).toLocaleString('en-US')} req/s`,
        pass: patch.load.requestsPerSecond >= 2000,
      },
      {
        name: `Start-up with a ${round(journalBytes / MB)} MB journal`,
        target: '< 1.5 s',
        measured: `${Math.round(journalMedian)} ms (median of ${journalRuns.length})`,
        pass: journalMedian < 1500,
      },
      {
        name: 'Peak RSS vs database size (serving)',
        target: '< 2x',
        measured:
          `${smallRssRatio.toFixed(2)}x (${round(smallPeak / MB)} vs ${round(snapshot.bytes / MB)} MB); ` +
          `${largeRssRatio.toFixed(2)}x at ${options.largeSessions.toLocaleString('en-US')} ` +
          `(${round(largePeak / MB)} vs ${round(large.snapshot.bytes / MB)} MB)`,
        pass: smallRssRatio < 2 && largeRssRatio < 2,
      },
    ];

    const results: BenchResults = {
      date: new Date().toISOString(),
      command: 'npm run bench',
      machine: {
        nproc: availableParallelism(),
        cpu: cpus()[0]?.model ?? 'unknown',
        memoryGB: round(totalmem() / 1e9),
        node: process.version,
        platform: `${platform()} ${release()}`,
        loadAverage: { before: round(loadBefore, 2), after: round(loadavg()[0] ?? 0, 2) },
      },
      source,
      options: { ...options },
      datasets: {
        small: datasetResult(small, options.sessions, options.messagesPerSession),
        large: datasetResult(large, options.largeSessions, options.largeMessagesPerSession),
      },
      startup: {
        snapshotOnly: {
          runsMs: snapshotOnlyRuns.map((v) => round(v)),
          medianMs: round(median(snapshotOnlyRuns)),
        },
        withJournal: {
          journalMB: round(journalBytes / MB),
          journalBytesBeforeFill: journalStartBytes,
          records,
          fillSeconds,
          runsMs: journalRuns.map((v) => round(v)),
          medianMs: round(journalMedian),
        },
        largeDatabaseMs: round(largeOpen.ms),
      },
      snapshot: {
        databaseMB: round(snapshot.bytes / MB),
        exportMs: round(snapshot.exportMs),
        totalMs: round(snapshot.totalMs),
      },
      http,
      memory: {
        peakRssMB: round(memory.overall / MB),
        peakRssByPhaseMB: Object.fromEntries(
          Object.entries(memory.phases).map(([k, v]) => [k, round(v / MB)]),
        ),
        small: {
          peakRssMB: round(smallPeak / MB),
          databaseMB: round(snapshot.bytes / MB),
          ratio: round(smallRssRatio, 3),
        },
        large: {
          peakRssMB: round(largePeak / MB),
          databaseMB: round(large.snapshot.bytes / MB),
          ratio: round(largeRssRatio, 3),
        },
      },
      previewMs,
      targets,
      problems,
      ok: problems.length === 0,
    };
    process.stdout.write(`\n${formatResults(results)}\n`);
    // Formatted as the repository's Prettier would, so `prettier --check bench` stays clean.
    const json = await format(JSON.stringify(results), {
      ...(await resolveConfig(outFile)),
      filepath: outFile,
    });
    writeFileSync(outFile, json);
    progress(`results written to ${outFile}`);
    return results.ok ? 0 : 1;
  } finally {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
    removeDirs();
    await sampler.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
