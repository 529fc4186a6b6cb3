import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, watch } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { Store } from '../src-main/store/store.js';
import { seedWorkspace } from './seed.js';
import {
  ballastTitle,
  insertBallastSession,
  DEFAULT_SNAPSHOT_AFTER_BYTES,
  generations,
  JOURNAL_FILE,
  newest,
  recordProof,
  SNAPSHOT_FILE,
  startServe,
  type Server,
} from './soak.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

/**
 * `npm run load`: a mixed load on the real server. Seeds a 10,000-session workspace with
 * bench/seed.ts, starts `sessiondesk serve` on it in a child process (the demo agent at a
 * moderate pace), and for LOAD_SECONDS drives 64 connections from a worker thread: reads
 * (GET one session, list pages of 50 following nextCursor), PATCH updates, creates and
 * follow-ups (cookie, with Origin) so agents run, while ~10 clients follow /api/events. One
 * snapshot happens during the run: before it, the journal is filled to just under the
 * server's threshold (a second workspace's agent setting, rewritten), so ordinary traffic
 * tips it over. Reports p50/p99 per kind, overall and while the snapshot ran, errors, and
 * the server's RSS (/proc/<pid>/status) over the run. See bench/PROOF.md.
 */

const EMAIL = 'load@bench.test';
const PASSWORD = 'load password, not secret';
const KINDS = ['get', 'list', 'patch', 'create', 'followUp'] as const;
type Kind = (typeof KINDS)[number];
const KIND_LABELS: Record<Kind, string> = {
  get: 'GET /api/sessions/:id',
  list: 'GET /api/sessions?limit=50 (+cursor)',
  patch: 'PATCH /api/sessions/:id',
  create: 'POST /api/sessions',
  followUp: 'POST /api/sessions/:id/messages',
};
const MB = 1024 * 1024;

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

const options = {
  seconds: envInt('LOAD_SECONDS', 60, 5),
  warmupSeconds: envInt('LOAD_WARMUP_SECONDS', 5, 0),
  connections: envInt('LOAD_CONNECTIONS', 64, 16),
  sessions: envInt('LOAD_SESSIONS', 10_000, 100),
  messagesPerSession: envInt('LOAD_MESSAGES', 20, 2),
  sseClients: envInt('LOAD_SSE_CLIENTS', 10, 0),
  paceMs: envInt('LOAD_PACE_MS', 100, 0),
  /** Requests per second, each spread over its own connections; the rest of the connections read. */
  patchRate: envInt('LOAD_PATCH_RATE', 100, 0),
  createRate: envInt('LOAD_CREATE_RATE', 4, 0),
  followUpRate: envInt('LOAD_FOLLOWUP_RATE', 4, 0),
  /** Of the read connections' requests, the share that are GET one session (the rest list pages). */
  getShare: 0.65,
  /** The journal is filled to this far under the threshold before the run. */
  snapshotMarginBytes: envInt('LOAD_SNAPSHOT_MARGIN_BYTES', 500_000, 0),
  snapshotAfterBytes: envInt('LOAD_SNAPSHOT_AFTER_BYTES', DEFAULT_SNAPSHOT_AFTER_BYTES, 1_000_000),
  maxRequests: 5_000_000,
};
const TARGET_P99_MS = 100;

const started = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);
const wallNow = () => performance.timeOrigin + performance.now();

// Plain JavaScript: an eval'd worker does not go through the TypeScript loader.
const LOAD_WORKER = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const w = workerData;
const { hostname, port, host } = new URL(w.url);
const keyHeaders = 'x-api-key: ' + w.apiKey + '\r\n';
const cookieHeaders = 'cookie: ' + w.cookie + '\r\norigin: ' + w.url + '\r\n';
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// src-main/seeded-random.ts, repeated here: this runs as worker source text, which cannot import it.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const kinds = [], starts = [], durations = [], statuses = [];
const errors = [];
let total = 0;
const created = [];
/**
 * One keep-alive HTTP/1.1 connection, one request at a time, with just enough parsing for
 * the server's answers (all carry content-length): leaner than node:http, so the two cores
 * go to the server rather than to the client. The last 4 KB of each answer is kept.
 */
const closers = [];
function connection() {
  let sock = null;
  closers.push(() => sock && sock.destroy());
  let waiting = null;
  let head = null;
  let need = -1;
  let got = 0;
  let status = 0;
  let tail = Buffer.alloc(0);
  function finish(result) {
    const pending = waiting;
    waiting = null;
    head = null;
    need = -1;
    got = 0;
    tail = Buffer.alloc(0);
    if (pending) {
      clearTimeout(pending.timer);
      pending.resolve(result);
    }
  }
  function onData(data) {
    if (!waiting) return;
    let d = data;
    if (need < 0) {
      head = head ? Buffer.concat([head, d]) : d;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const text = head.toString('latin1', 0, end);
      status = Number(text.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/i.exec(text);
      if (!length) {
        sock.destroy();
        finish({ status: 0, error: 'an answer without content-length' });
        return;
      }
      need = Number(length[1]);
      d = head.subarray(end + 4);
      head = null;
    }
    got += d.length;
    tail = d.length >= 4096 ? d.subarray(d.length - 4096) : Buffer.concat([tail, d]).subarray(-4096);
    if (got >= need) finish({ status, body: tail });
  }
  function open() {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.setNoDelay(true);
    socket.on('data', onData);
    socket.on('error', (e) => finish({ status: 0, error: String(e) }));
    socket.on('close', () => {
      if (sock === socket) sock = null;
      finish({ status: 0, error: 'the connection closed before the answer' });
    });
    sock = socket;
  }
  return (method, path, auth, body) =>
    new Promise((resolve) => {
      if (!sock) open();
      waiting = { resolve, timer: setTimeout(() => sock && sock.destroy(), 30000) };
      let text = method + ' ' + path + ' HTTP/1.1\r\nhost: ' + host + '\r\n' + (auth === 'key' ? keyHeaders : cookieHeaders);
      const payload = body === undefined ? '' : JSON.stringify(body);
      if (body !== undefined) text += 'content-type: application/json\r\ncontent-length: ' + Buffer.byteLength(payload) + '\r\n';
      sock.write(text + '\r\n' + payload);
    });
}
async function timed(send, kind, method, path, auth, body) {
  const started = now();
  const res = await send(method, path, auth, body);
  kinds.push(kind); starts.push(started); durations.push(now() - started); statuses.push(res.status);
  total += 1;
  if ((res.status < 200 || res.status >= 300) && errors.length < 20) {
    errors.push(method + ' ' + path.split('?')[0] + ': ' + (res.error || res.status + ' ' + String(res.body).slice(0, 200)));
  }
  return res;
}
const going = () => now() < w.untilMs && total < w.maxRequests;
async function reader(seed) {
  const rand = generator(seed);
  const send = connection();
  let cursor = null;
  while (going()) {
    if (rand() < w.getShare) {
      await timed(send, 0, 'GET', '/api/sessions/' + w.sessionIds[Math.floor(rand() * w.sessionIds.length)], 'key');
      continue;
    }
    const res = await timed(send, 1, 'GET', '/api/sessions?limit=50' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''), 'key');
    // Up to five pages deep, then back to the first; nextCursor is the last field of the answer.
    const match = res.status === 200 ? /"nextCursor":"([^"]+)"/.exec(res.body.toString('latin1', Math.max(0, res.body.length - 400))) : null;
    cursor = match && rand() < 0.8 ? match[1] : null;
  }
}
async function paced(rate, act) {
  if (rate <= 0) return;
  const send = connection();
  const gap = 1000 / rate;
  let next = now() + Math.random() * gap;
  while (going()) {
    const wait = next - now();
    if (wait > 0) await sleep(wait);
    if (!going()) break;
    await act(send);
    next = Math.max(next + gap, now() - 1000);
  }
}
(async () => {
  const rand = generator(w.seed);
  let n = 0;
  const loops = [];
  const perConn = (rate, conns) => rate / conns;
  for (let c = 0; c < w.patchConnections; c += 1) {
    loops.push(paced(perConn(w.patchRate, w.patchConnections), (send) => {
      n += 1;
      const id = w.sessionIds[Math.floor(rand() * w.sessionIds.length)];
      return timed(send, 2, 'PATCH', '/api/sessions/' + id, 'key', { title: 'Load title ' + n });
    }));
  }
  for (let c = 0; c < w.createConnections; c += 1) {
    loops.push(paced(perConn(w.createRate, w.createConnections), async (send) => {
      n += 1;
      const res = await timed(send, 3, 'POST', '/api/sessions', 'cookie', {
        organizationId: w.organizationId,
        initialMessage: 'Load ' + n + ': make the retry helper back off exponentially and test it',
        repoUrl: 'https://github.com/acme/web-app',
      });
      if (res.status === 201) created.push(JSON.parse(res.body.toString()).session.id);
    }));
  }
  for (let c = 0; c < w.followUpConnections; c += 1) {
    loops.push(paced(perConn(w.followUpRate, w.followUpConnections), (send) => {
      n += 1;
      const pool = created.length > 0 && rand() < 0.7 ? created : w.sessionIds;
      const id = pool[Math.floor(rand() * pool.length)];
      return timed(send, 4, 'POST', '/api/sessions/' + id + '/messages', 'cookie', { content: 'Follow-up ' + n + ': also cover the timeout path' });
    }));
  }
  for (let c = 0; c < w.readConnections; c += 1) loops.push(reader(w.seed + 1 + c));
  await Promise.all(loops);
  for (const close of closers) close();
  parentPort.postMessage({
    kinds: Uint8Array.from(kinds), starts: Float64Array.from(starts), durations: Float64Array.from(durations),
    statuses: Uint16Array.from(statuses), errors, created: created.length,
  });
})().catch((err) => parentPort.postMessage({ fatal: String((err && err.stack) || err) }));
`;

interface WorkerResult {
  kinds: Uint8Array;
  starts: Float64Array;
  durations: Float64Array;
  statuses: Uint16Array;
  errors: string[];
  created: number;
  fatal?: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

const r1 = (n: number) => Math.round(n * 10) / 10;

interface KindStats {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

function stats(durations: number[], errors: number, seconds: number): KindStats {
  const sorted = [...durations].sort((a, b) => a - b);
  return {
    requests: durations.length,
    perSecond: r1(durations.length / seconds),
    p50: r1(percentile(sorted, 50)),
    p99: r1(percentile(sorted, 99)),
    max: r1(sorted.at(-1) ?? Number.NaN),
    errors,
  };
}

/** User + system CPU seconds of a process so far (all its threads). */
function cpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function vmRssBytes(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** A server-sent-events client that only counts: events, bytes, and whether it ended early. */
function followEvents(url: string, apiKey: string) {
  const controller = new AbortController();
  const state = { events: 0, bytes: 0, error: null as string | null, stopped: false };
  const done = (async () => {
    try {
      const response = await fetch(`${url}/api/events`, {
        headers: { 'x-api-key': apiKey },
        signal: controller.signal,
      });
      if (response.status !== 200 || !response.body) throw new Error(`answered ${response.status}`);
      const reader = response.body.getReader();
      let tail = '';
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        state.bytes += value.byteLength;
        const text = tail + Buffer.from(value).toString('utf8');
        const blocks = text.split('\n\n');
        tail = blocks.pop() ?? '';
        state.events += blocks.filter((b) => b.includes('\ndata:') || b.startsWith('data:')).length;
      }
      if (!state.stopped) state.error = 'the stream ended during the run';
    } catch (err) {
      if (!state.stopped) state.error = err instanceof Error ? err.message : String(err);
    }
  })();
  return {
    state,
    async stop() {
      state.stopped = true;
      controller.abort();
      await done;
    },
  };
}

async function prepareExtra(dataDir: string, organizationId: string) {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email: EMAIL, name: 'Load Tester', password: PASSWORD });
    await accounts.addMember({ organizationId, email: EMAIL });
    const ballast = await accounts.createWorkspace({ name: 'Load ballast', ownerEmail: EMAIL });
    return { ballastSessionId: await insertBallastSession(store, ballast.organizationId, EMAIL) };
  } finally {
    await store.close();
  }
}

function journalBytes(dataDir: string): { generation: number; bytes: number } {
  const generation = newest(generations(readdirSync(dataDir), JOURNAL_FILE));
  try {
    return {
      generation,
      bytes: statSync(join(dataDir, `journal-${String(generation).padStart(12, '0')}.log`)).size,
    };
  } catch {
    return { generation, bytes: 0 };
  }
}

async function main(): Promise<void> {
  const loadAverageBefore = loadavg().map((n) => Math.round(n * 100) / 100);
  const dataDir = mkdtempSync(join(tmpdir(), 'sessiondesk-load-'));
  let server: Server | null = null;
  const cleanup = () => {
    server?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    progress(
      `seeding ${options.sessions.toLocaleString('en-US')} sessions x ${options.messagesPerSession} messages`,
    );
    const seeded = await seedWorkspace({
      dataDir,
      sessions: options.sessions,
      messagesPerSession: options.messagesPerSession,
      spanDays: 90,
      progress,
    });
    const { ballastSessionId } = await prepareExtra(dataDir, seeded.organizationId);
    const databaseMB = r1(seeded.snapshot.bytes / MB);

    progress(`starting sessiondesk serve (database ${databaseMB} MB, demo agent pace ${options.paceMs} ms)`);
    const env: NodeJS.ProcessEnv = {
      SESSIONDESK_DEMO_PACE_MS: String(options.paceMs),
      // For a profile of the server alone, e.g. LOAD_SERVER_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
      ...(process.env.LOAD_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.LOAD_SERVER_NODE_OPTIONS } : {}),
      ...(options.snapshotAfterBytes === DEFAULT_SNAPSHOT_AFTER_BYTES
        ? {}
        : { SESSIONDESK_SNAPSHOT_AFTER_BYTES: String(options.snapshotAfterBytes) }),
    };
    server = await startServe(dataDir, env);
    const live = server;
    const pid = live.child.pid;
    if (pid === undefined) throw new Error('the server has no pid');
    const url = live.url;
    if (!url.startsWith('http://127.0.0.1:')) throw new Error(`the server is not on 127.0.0.1: ${url}`);
    progress(`listening at ${url} after ${Math.round(live.startMs)} ms`);

    const signIn = await fetch(`${url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}`);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';

    // The journal to just under the snapshot threshold, so the run's own writes start one.
    const target = options.snapshotAfterBytes - options.snapshotMarginBytes;
    let renames = 0;
    const ballastPut = async () => {
      const answer = await fetch(`${url}/api/sessions/${ballastSessionId}`, {
        method: 'PATCH',
        headers: { cookie, origin: url, 'content-type': 'application/json' },
        body: JSON.stringify({ title: ballastTitle((renames += 1)) }),
      });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`ballast rename answered ${answer.status}`);
    };
    const generationBefore = journalBytes(dataDir).generation;
    progress(
      `filling the journal to ${r1(target / MB)} MB (threshold ${r1(options.snapshotAfterBytes / MB)} MB)`,
    );
    let ballastPuts = 0;
    const fill = async (until: () => boolean) => {
      while (!until()) {
        await ballastPut();
        ballastPuts += 1;
      }
    };
    const filled = () =>
      journalBytes(dataDir).generation !== generationBefore || journalBytes(dataDir).bytes >= target;
    await Promise.all([fill(filled), fill(filled)]);
    if (journalBytes(dataDir).generation !== generationBefore) {
      throw new Error(
        'a snapshot began while the journal was being filled: lower LOAD_SNAPSHOT_MARGIN_BYTES',
      );
    }
    progress(`journal at ${r1(journalBytes(dataDir).bytes / MB)} MB after ${ballastPuts} PUTs`);

    for (const path of [`/api/sessions/${seeded.sessionIds[0]}`, '/api/sessions?limit=50']) {
      const answer = await fetch(`${url}${path}`, { headers: { 'x-api-key': seeded.apiKey } });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`${path} answered ${answer.status} before the run`);
    }

    // ---- The run.
    const windows: { began: number; done: number | null }[] = [];
    const snapshotGenerationAtStart = newest(generations(readdirSync(dataDir), SNAPSHOT_FILE));
    const journalGenerationAtStart = journalBytes(dataDir).generation;
    const seenJournals = new Set<number>();
    const watcher = watch(dataDir, (_event, filename) => {
      const name = String(filename ?? '');
      const journal = JOURNAL_FILE.exec(name);
      if (journal) {
        const generation = Number(journal[1]);
        if (generation > journalGenerationAtStart && !seenJournals.has(generation)) {
          seenJournals.add(generation);
          windows.push({ began: wallNow(), done: null });
          progress(`snapshot ${generation} began`);
        }
      }
      const snap = SNAPSHOT_FILE.exec(name);
      if (snap && Number(snap[1]) > snapshotGenerationAtStart) {
        const open = windows.find((w) => w.done === null);
        if (open) {
          open.done = wallNow();
          progress(`snapshot ${snap[1]} written after ${Math.round(open.done - open.began)} ms`);
        }
      }
    });

    // A warm-up (connections opened, code compiled) first; its answers count only for errors.
    const runStart = wallNow() + options.warmupSeconds * 1000;
    const untilMs = runStart + options.seconds * 1000;
    const rss: { t: number; bytes: number }[] = [];
    const sampleRss = () => {
      const bytes = vmRssBytes(pid);
      if (bytes !== null) rss.push({ t: wallNow() - runStart, bytes });
    };
    const sse = Array.from({ length: options.sseClients }, () => followEvents(url, seeded.apiKey));

    const writeConnections = {
      patchConnections: options.patchRate > 0 ? 4 : 0,
      createConnections: options.createRate > 0 ? 2 : 0,
      followUpConnections: options.followUpRate > 0 ? 2 : 0,
    };
    const readConnections =
      options.connections -
      writeConnections.patchConnections -
      writeConnections.createConnections -
      writeConnections.followUpConnections;
    progress(
      `running ${options.warmupSeconds} + ${options.seconds} s: ${options.connections} connections (${readConnections} reading; PATCH ` +
        `${options.patchRate}/s, create ${options.createRate}/s, follow-up ${options.followUpRate}/s) and ` +
        `${options.sseClients} event streams`,
    );
    const worker = new Worker(LOAD_WORKER, {
      eval: true,
      workerData: {
        url,
        apiKey: seeded.apiKey,
        cookie,
        organizationId: seeded.organizationId,
        sessionIds: seeded.sessionIds,
        untilMs,
        maxRequests: options.maxRequests,
        getShare: options.getShare,
        readConnections,
        ...writeConnections,
        patchRate: options.patchRate,
        createRate: options.createRate,
        followUpRate: options.followUpRate,
        seed: 0x10ad,
      },
    });
    const finished = new Promise<WorkerResult>((resolve, reject) => {
      worker.once('message', (m: WorkerResult) => resolve(m));
      worker.once('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, runStart - wallNow())));
    const cpuAtStart = cpuSeconds(pid);
    const ownCpuAtStart = process.cpuUsage();
    sampleRss();
    const sampler = setInterval(sampleRss, 250);
    // Every 5 s: sessions with an agent at work (status active) and events delivered, to see
    // whether the work the server carries changes over the run.
    const activity: { atSecond: number; activeSessions: number; eventsPerSecond: number }[] = [];
    let eventsBefore = 0;
    const activitySampler = setInterval(() => {
      void (async () => {
        const answer = await fetch(`${url}/api/sessions?status=active&limit=200`, {
          headers: { 'x-api-key': seeded.apiKey },
        });
        const body = (await answer.json()) as { sessions?: unknown[] };
        const events = sse.reduce((sum, c) => sum + c.state.events, 0);
        activity.push({
          atSecond: Math.round((wallNow() - runStart) / 1000),
          activeSessions: body.sessions?.length ?? -1,
          eventsPerSecond: Math.round((events - eventsBefore) / 5),
        });
        eventsBefore = events;
      })().catch(() => undefined);
    }, 5000);
    // If ordinary traffic has not started a snapshot by half the run, top the journal up.
    let topUpPuts = 0;
    const topUp = setTimeout(() => {
      if (windows.length > 0) return;
      progress('no snapshot yet at half the run: topping the journal up');
      void (async () => {
        while (windows.length === 0 && wallNow() < untilMs) {
          await ballastPut().catch(() => undefined);
          topUpPuts += 1;
        }
      })();
    }, options.seconds * 500);
    progress(`warm-up done; measuring ${options.seconds} s`);
    const result = await finished;
    clearTimeout(topUp);
    await worker.terminate();
    if (result.fatal) throw new Error(`the load worker failed: ${result.fatal}`);
    const runSeconds = (wallNow() - runStart) / 1000;
    const cpuAtEnd = cpuSeconds(pid);
    const ownCpu = process.cpuUsage(ownCpuAtStart);
    const loadGeneratorCpuPercent = Math.round(((ownCpu.user + ownCpu.system) / 1e6 / runSeconds) * 100);
    const serverCpuPercent =
      cpuAtStart === null || cpuAtEnd === null
        ? null
        : Math.round(((cpuAtEnd - cpuAtStart) / runSeconds) * 100);
    for (const client of sse) await client.stop();
    clearInterval(sampler);
    clearInterval(activitySampler);
    sampleRss();
    // A snapshot still being written: wait for it, so its window is complete.
    for (let i = 0; i < 600 && windows.some((w) => w.done === null); i += 1) {
      await new Promise((r) => setTimeout(r, 50));
    }
    watcher.close();
    const stopCode = await live.stop();
    server = null;
    // The clean stop writes a snapshot: how much the database itself grew during the run.
    const finalSnapshot = newest(generations(readdirSync(dataDir), SNAPSHOT_FILE));
    const finalDatabaseMB = r1(
      statSync(join(dataDir, `snapshot-${String(finalSnapshot).padStart(12, '0')}.db`)).size / MB,
    );
    const databaseGrowthMB = r1(finalDatabaseMB - databaseMB);

    // ---- Figures.
    const inWindow = (start: number, duration: number) =>
      windows.some((w) => start <= (w.done ?? untilMs) && start + duration >= w.began);
    const perKind = {} as Record<Kind, { overall: KindStats; duringSnapshot: KindStats }>;
    const statusCounts: Record<string, number> = {};
    KINDS.forEach((kind, k) => {
      const all: number[] = [];
      const during: number[] = [];
      let errors = 0;
      let errorsDuring = 0;
      for (let i = 0; i < result.kinds.length; i += 1) {
        if (result.kinds[i] !== k) continue;
        const start = result.starts[i] as number;
        const ms = result.durations[i] as number;
        const status = result.statuses[i] as number;
        statusCounts[status] = (statusCounts[status] ?? 0) + 1;
        const failed = status < 200 || status >= 300;
        if (failed) errors += 1;
        if (start < runStart) continue;
        all.push(ms);
        if (inWindow(start, ms)) {
          during.push(ms);
          if (failed) errorsDuring += 1;
        }
      }
      const windowSeconds = windows.reduce((sum, w) => sum + ((w.done ?? untilMs) - w.began) / 1000, 0);
      perKind[kind] = {
        overall: stats(all, errors, runSeconds),
        duringSnapshot: stats(during, errorsDuring, Math.max(windowSeconds, 0.001)),
      };
    });
    const requestErrors = KINDS.reduce((sum, kind) => sum + perKind[kind].overall.errors, 0);
    // When the slowest answers were asked for, to tell a stall from a steady queue.
    const order = Array.from(result.durations.keys())
      .filter((i) => (result.starts[i] as number) >= runStart)
      .sort((a, b) => (result.durations[b] as number) - (result.durations[a] as number));
    const slowest = order.slice(0, 8).map((i) => ({
      kind: KINDS[result.kinds[i] as number] as Kind,
      atSecond: r1(((result.starts[i] as number) - runStart) / 1000),
      ms: r1(result.durations[i] as number),
    }));
    const perSecondP99 = Array.from({ length: Math.ceil(runSeconds) }, (_, second) => {
      const values: number[] = [];
      for (let i = 0; i < result.kinds.length; i += 1) {
        const at = ((result.starts[i] as number) - runStart) / 1000;
        if (at >= second && at < second + 1 && (result.kinds[i] as number) <= 1) {
          values.push(result.durations[i] as number);
        }
      }
      return Math.round(
        percentile(
          values.sort((a, b) => a - b),
          99,
        ),
      );
    });
    const sseErrors = sse.map((c) => c.state.error).filter((e): e is string => e !== null);

    const seconds = options.seconds * 1000;
    const inRange = (from: number, to: number) =>
      rss.filter((s) => s.t >= from * seconds && s.t < to * seconds).map((s) => s.bytes);
    const medianOf = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      );
    const rssFigures = {
      samples: rss.length,
      startMB: r1((rss[0]?.bytes ?? Number.NaN) / MB),
      peakMB: r1(Math.max(...rss.map((s) => s.bytes)) / MB),
      endMB: r1((rss.at(-1)?.bytes ?? Number.NaN) / MB),
      secondQuarterMedianMB: r1(medianOf(inRange(0.25, 0.5)) / MB),
      lastQuarterMedianMB: r1(medianOf(inRange(0.75, 1.01)) / MB),
      growthMB: 0,
    };
    rssFigures.growthMB = r1(rssFigures.lastQuarterMedianMB - rssFigures.secondQuarterMedianMB);
    const rssEvery5s = Array.from({ length: Math.ceil(options.seconds / 5) }, (_, i) =>
      Math.round(
        medianOf(rss.filter((x) => x.t >= i * 5000 && x.t < (i + 1) * 5000).map((x) => x.bytes)) / MB,
      ),
    );
    // Memory that holds new data is not a leak: the database's own growth is allowed on top.
    const allowedGrowthMB = r1(
      Math.max(16, rssFigures.secondQuarterMedianMB * 0.05) + Math.max(0, databaseGrowthMB),
    );

    const snapshotFigures = windows.map((w) => ({
      beganAtSecond: r1((w.began - runStart) / 1000),
      durationMs: w.done === null ? null : Math.round(w.done - w.began),
    }));
    const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');
    const targets = [
      {
        target: `GET one session p99 < ${TARGET_P99_MS} ms`,
        value: `${perKind.get.overall.p99} ms`,
        ok: perKind.get.overall.p99 < TARGET_P99_MS,
      },
      {
        target: `list page p99 < ${TARGET_P99_MS} ms`,
        value: `${perKind.list.overall.p99} ms`,
        ok: perKind.list.overall.p99 < TARGET_P99_MS,
      },
      {
        target: `GET one session p99 < ${TARGET_P99_MS} ms during the snapshot`,
        value: `${perKind.get.duringSnapshot.p99} ms (${perKind.get.duringSnapshot.requests} requests)`,
        ok: windows.length > 0 && perKind.get.duringSnapshot.p99 < TARGET_P99_MS,
      },
      {
        target: `list page p99 < ${TARGET_P99_MS} ms during the snapshot`,
        value: `${perKind.list.duringSnapshot.p99} ms (${perKind.list.duringSnapshot.requests} requests)`,
        ok: windows.length > 0 && perKind.list.duringSnapshot.p99 < TARGET_P99_MS,
      },
      {
        target: 'zero errors (requests and event streams)',
        value: `${requestErrors} request errors, ${sseErrors.length} stream errors`,
        ok: requestErrors === 0 && sseErrors.length === 0,
      },
      {
        target: `RSS not growing (2nd to last quarter, <= ${allowedGrowthMB} MB incl. the database's +${databaseGrowthMB} MB)`,
        value: `${rssFigures.growthMB >= 0 ? '+' : ''}${rssFigures.growthMB} MB`,
        ok: rssFigures.growthMB <= allowedGrowthMB,
      },
      {
        target: 'a snapshot during the run',
        value: windows.length === 0 ? 'none' : snapshotFigures.map((s) => `${s.durationMs} ms`).join(', '),
        ok: windows.length > 0 && windows.every((w) => w.done !== null),
      },
    ].map((t) => ({ ...t, result: mark(t.ok) }));

    const lines = [
      `Mixed load: ${r1(runSeconds)} s, ${options.connections} connections, ${options.sseClients} event streams, ` +
        `${options.sessions.toLocaleString('en-US')} sessions (${databaseMB} MB database)`,
      '',
      `${'request'.padEnd(38)} ${'req/s'.padStart(7)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)} | ${'in snapshot: n'.padStart(14)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}`,
      ...KINDS.map((kind) => {
        const o = perKind[kind].overall;
        const d = perKind[kind].duringSnapshot;
        return `${KIND_LABELS[kind].padEnd(38)} ${String(o.perSecond).padStart(7)} ${String(o.p50).padStart(7)} ${String(o.p99).padStart(7)} ${String(o.max).padStart(7)} | ${String(d.requests).padStart(14)} ${String(d.p50).padStart(7)} ${String(d.p99).padStart(7)} ${String(d.max).padStart(7)}`;
      }),
      '(latencies in ms)',
      '',
      `snapshots during the run: ${snapshotFigures.map((s) => `began at ${s.beganAtSecond} s, written in ${s.durationMs} ms`).join('; ') || 'none'}`,
      `server RSS: start ${rssFigures.startMB} MB, peak ${rssFigures.peakMB} MB, end ${rssFigures.endMB} MB; ` +
        `median 2nd quarter ${rssFigures.secondQuarterMedianMB} MB, last quarter ${rssFigures.lastQuarterMedianMB} MB`,
      `server RSS every 5 s (MB, median of the samples): ${rssEvery5s.join(' ')}`,
      `database: ${databaseMB} MB before the run, ${finalDatabaseMB} MB after; CPU over the run: server ${serverCpuPercent ?? '?'}%, this load generator ${loadGeneratorCpuPercent}% (of one core)`,
      `event streams: ${sse.map((c) => c.state.events).reduce((a, b) => a + b, 0)} events received by ${sse.length} clients`,
      `sessions created: ${result.created}; journal prefill ${ballastPuts} PUTs, top-up ${topUpPuts}; server stopped with ${stopCode}`,
      `slowest: ${slowest.map((x) => `${x.kind} ${x.ms} ms at ${x.atSecond} s`).join('; ')}`,
      `reads' p99 per second of the run (ms): ${perSecondP99.join(' ')}`,
      `every 5 s, sessions active / events per second sent to all streams: ${activity.map((a) => `${a.activeSessions}/${a.eventsPerSecond}`).join(' ')}`,
      ...result.errors.map((e) => `  error: ${e}`),
      ...sseErrors.map((e) => `  event stream error: ${e}`),
      '',
      ...targets.map((t) => `${t.result}  ${t.target}: ${t.value}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const path = await recordProof(
      'load',
      {
        command: 'npm run load',
        loadAverageBefore,
        options: { ...options, seconds: options.seconds },
        databaseMB,
        finalDatabaseMB,
        databaseGrowthMB,
        serverCpuPercent,
        loadGeneratorCpuPercent,
        runSeconds: r1(runSeconds),
        perKind,
        statusCounts,
        snapshots: snapshotFigures,
        rss: { ...rssFigures, every5sMB: rssEvery5s },
        eventStreams: {
          clients: sse.length,
          events: sse.map((c) => c.state.events),
          errors: sseErrors,
        },
        errors: result.errors,
        slowest,
        readsP99PerSecond: perSecondP99,
        activity,
        sessionsCreated: result.created,
        journalPrefillPuts: ballastPuts,
        topUpPuts,
        serverStopCode: stopCode,
        targets,
      },
      process.env.LOAD_OUT,
    );
    progress(`results written to ${path}`);
    process.exitCode = requestErrors === 0 && sseErrors.length === 0 && windows.length > 0 ? 0 : 1;
  } finally {
    cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
