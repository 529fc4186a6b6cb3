import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { newId } from '../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { Store } from '../src-main/store/store.js';
import type { Message } from '../src-shared/sessions.js';
import { buildBenchServer, startChild } from './bench-child.js';
import { listeningUrl, runLoad, type LoadResult } from './load.js';
import { randomGenerator } from './seed.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

/**
 * `npm run bench:scale`: sessions the size real coding agents write (median about 300 KB,
 * 2% of 10 to 100 MB, about 3 GB in all by default), seeded through the product's own store,
 * then served by `startServer` in a process of its own (bench/scale-server.ts) and measured
 * side by side with a bare Fastify route. See bench/README.md; results go to
 * bench/scale-results.json and stdout.
 */

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

const options = {
  sessions: Math.round(envNumber('SCALE_SESSIONS', 2_000)),
  /** Multiplies every session's size: 1 gives about 3 GB; 0.01 a quick check. */
  sizeFactor: envNumber('SCALE_SIZE_FACTOR', 1),
  /** Small sessions added after the big ones, for the snapshot and list at 10,000 sessions. */
  smallSessions: Math.round(envNumber('SCALE_SMALL_SESSIONS', 8_000)),
  seconds: envNumber('SCALE_SECONDS', 5),
};
const outFile = process.env.SCALE_OUT ?? fileURLToPath(new URL('./scale-results.json', import.meta.url));
const MB = 1024 * 1024;
const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);

/** Sizes that follow the public reports: log-normal around 300 KB, and 2% of 10 to 100 MB. */
function sessionSizes(count: number, random: () => number): number[] {
  const sizes: number[] = [];
  for (let i = 0; i < count; i += 1) {
    if (i === 0) sizes.push(100 * MB);
    else if (i % 50 === 7) sizes.push(10 * MB * 10 ** random());
    else {
      // Box-Muller: a normal variate; sigma 1.2 around ln(300 KB), capped at 8 MB.
      const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      sizes.push(Math.min(8 * MB, 300 * 1024 * Math.exp(1.2 * normal)));
    }
  }
  return sizes.map((s) => Math.max(4_000, Math.round(s * options.sizeFactor)));
}

/** Messages shaped like Claude Code's: thinking, text, tool calls and results holding files. */
class ConversationMaker {
  private readonly files: string[];
  private counter = 0;

  constructor(private readonly random: () => number) {
    const words =
      'const let value return function import export from await async if else for of the state'.split(' ');
    this.files = Array.from({ length: 32 }, (_, f) => {
      const lines: string[] = [];
      for (let n = 0; lines.join('\n').length < 64 * 1024; n += 1) {
        const count = 3 + Math.floor(random() * 9);
        lines.push(
          `${'  '.repeat(n % 4)}${Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(' ')}; // ${f}.${n}`,
        );
      }
      return lines.join('\n');
    });
  }

  private text(length: number): string {
    const file = this.files[Math.floor(this.random() * this.files.length)] as string;
    const start = Math.floor(this.random() * Math.max(1, file.length - length));
    let text = file.slice(start, start + length);
    while (text.length < length) text += `\n${file.slice(0, length - text.length)}`;
    return text;
  }

  /** The next message of a run; big sessions read big files. */
  next(big: boolean): Message {
    this.counter += 1;
    const id = `toolu_${this.counter.toString(36)}`;
    const roll = this.random();
    if (roll < 0.15) {
      return {
        type: 'assistant',
        message: {
          content: [{ type: 'thinking', thinking: this.text(500 + Math.floor(this.random() * 2500)) }],
        },
      };
    }
    if (roll < 0.35) {
      return {
        type: 'assistant',
        message: { content: [{ type: 'text', text: this.text(200 + Math.floor(this.random() * 1300)) }] },
      };
    }
    if (roll < 0.6) {
      return {
        type: 'assistant',
        message: {
          content: [
            {
              type: 'tool_use',
              id,
              name: 'Edit',
              input: {
                file_path: `src/f${this.counter}.ts`,
                old_string: this.text(300),
                new_string: this.text(300),
              },
            },
          ],
        },
      };
    }
    const bytes =
      big && this.random() < 0.1
        ? 200_000 + Math.floor(this.random() * 1_800_000)
        : 2_000 + Math.floor(this.random() * 58_000);
    return {
      type: 'assistant',
      message: {
        content: [{ type: 'tool_result', tool_use_id: id, content: this.text(bytes), is_error: false }],
      },
    };
  }
}

interface Seeded {
  organizationId: string;
  apiKey: string;
  sessions: Array<{ id: string; bytes: number }>;
  smallIds: string[];
  transcriptBytes: number;
  seedMs: number;
  maxStallMs: number;
  snapshotExportMs: number;
}

async function seed(dataDir: string): Promise<Seeded> {
  const random = randomGenerator(0x5ca1e);
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  const repos = createRepositories(store.db);
  const accounts = createAccounts(storageOf(store), systemClock);
  const user = await accounts.createUser({
    email: 'ada@bench.test',
    name: 'Ada',
    password: 'bench password, not secret',
  });
  const workspace = await accounts.createWorkspace({ name: 'Scale', ownerEmail: 'ada@bench.test' });
  const key = await accounts.createKey({ organizationId: workspace.organizationId, label: 'bench' });
  const maker = new ConversationMaker(random);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const sizes = sessionSizes(options.sessions, random);
  const sessions: Seeded['sessions'] = [];
  const now = Date.now();
  let total = 0;
  const at = (ms: number) => new Date(ms).toISOString();
  const insert = (id: string, createdMs: number, prompt: string) =>
    repos.sessions.insert({
      id,
      workspaceId: workspace.organizationId,
      authorId: user.id,
      title: prompt.slice(0, 60),
      model: 'claude-opus-4-6',
      createdAt: at(createdMs),
      repoUrl: 'https://github.com/acme/web',
      repository: 'acme/web',
      baseBranch: 'main',
      initialMessage: prompt,
    });
  for (const [n, size] of sizes.entries()) {
    const id = newId('session');
    const createdMs = now - (sizes.length - n) * 60_000;
    let bytes = 0;
    let pending: Message[] = [];
    let first = true;
    const flush = async () => {
      const batch = pending;
      pending = [];
      const isFirst = first;
      first = false;
      await store.write(() => {
        if (isFirst) insert(id, createdMs, `Session ${n}: find why the build is slow and fix it`);
        for (const message of batch) {
          repos.sessions.appendMessage(id, workspace.organizationId, message, null, at(createdMs + 1000));
        }
      });
    };
    let batchBytes = 0;
    while (bytes < size) {
      const message = maker.next(size > 10 * MB * options.sizeFactor);
      const length = JSON.stringify(message).length;
      pending.push(message);
      bytes += length;
      batchBytes += length;
      // About 2 MB per durable write, as a busy agent's stream would be batched.
      if (batchBytes >= 2 * MB) {
        await flush();
        batchBytes = 0;
      }
    }
    await flush();
    sessions.push({ id, bytes });
    total += bytes;
    if ((n + 1) % 100 === 0)
      progress(`  seeded ${n + 1} / ${sizes.length} sessions, ${(total / MB).toFixed(0)} MB`);
  }
  const seedMs = performance.now() - started;
  const maxStallMs = loop.max / 1e6;
  progress(`adding ${options.smallSessions} small sessions`);
  const smallIds: string[] = [];
  for (let first = 0; first < options.smallSessions; first += 500) {
    await store.write(() => {
      for (let n = first; n < Math.min(options.smallSessions, first + 500); n += 1) {
        const id = newId('session');
        insert(id, now - 10 * 86_400_000 + n * 1000, `Small session ${n}: rename a variable`);
        repos.sessions.appendMessage(id, workspace.organizationId, maker.next(false), null, at(now));
        smallIds.push(id);
      }
    });
  }
  await store.snapshot();
  const snapshot = await store.snapshot();
  await store.close({ snapshot: false });
  return {
    organizationId: workspace.organizationId,
    apiKey: key.key,
    sessions,
    smallIds,
    transcriptBytes: total,
    seedMs,
    maxStallMs,
    snapshotExportMs: snapshot.exportMs,
  };
}

function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ firstByteMs: number; totalMs: number; bytes: number; status: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers }, (res) => {
      const firstByteMs = performance.now() - started;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () =>
        resolve({ firstByteMs, totalMs: performance.now() - started, bytes, status: res.statusCode ?? 0 }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sessiondesk-scale-'));
  try {
    progress(`seeding ${options.sessions} sessions (size factor ${options.sizeFactor}) into ${dataDir}`);
    const seeded = await seed(dataDir);
    progress(
      `seeded ${(seeded.transcriptBytes / MB).toFixed(0)} MB in ${(seeded.seedMs / 1000).toFixed(1)} s`,
    );

    // The server runs built, as `sessiondesk serve` does (out/cli/): compiling TypeScript at
    // start would be measured too. Inside the checkout, so that its packages resolve.
    const { url, ready, ask, spawned, child } = await startChild(await buildBenchServer(), dataDir);
    const headers = { 'x-api-key': seeded.apiKey };
    const firstAnswer = await get(`${url}/api/sessions?limit=1`, headers);
    const startupMs = performance.now() - spawned;
    if (firstAnswer.status !== 200) throw new Error(`first request answered ${firstAnswer.status}`);
    const startPhase = await ask({ cmd: 'phase', name: 'start' });

    // GET of a session of about 1 MB, against a bare route sending the same bytes from a file.
    const oneMB = seeded.sessions.reduce((best, s) =>
      Math.abs(s.bytes - MB) < Math.abs(best.bytes - MB) ? s : best,
    );
    const sample = join(dataDir, 'one-session.json');
    const body = await fetch(`${url}/api/sessions/${oneMB.id}`, { headers }).then((r) => r.arrayBuffer());
    writeFileSync(sample, Buffer.from(body));
    const bare = Fastify({ logger: false });
    bare.get('/bare', (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(createReadStream(sample)),
    );
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const load = (target: string, path: string, connections: number): Promise<LoadResult> =>
      runLoad({
        url: target,
        requests: [{ method: 'GET', path }],
        headers,
        connections,
        seconds: options.seconds,
      });
    progress('GET one 1 MB session, and the bare route');
    const getOne = await load(url, `/api/sessions/${oneMB.id}`, 8);
    const bareOne = await load(listeningUrl(bare), '/bare', 8);
    await bare.close();
    const getPhase = await ask({ cmd: 'phase', name: 'get' });

    progress('GET the largest session');
    const largest = seeded.sessions.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const largestRuns = [];
    for (let i = 0; i < 5; i += 1) largestRuns.push(await get(`${url}/api/sessions/${largest.id}`, headers));
    const largestPhase = await ask({ cmd: 'phase', name: 'largest' });

    progress('list pages of 50');
    const list = await load(url, '/api/sessions?limit=50', 32);
    const listPhase = await ask({ cmd: 'phase', name: 'list' });

    progress('durable appends from 32 sessions at once');
    const appends = await ask({
      cmd: 'appends',
      sessionIds: seeded.smallIds.slice(0, 32),
      workspaceId: seeded.organizationId,
      seconds: options.seconds,
      bytes: 1500,
    });
    const snapshot = await ask({ cmd: 'snapshot' });
    const stopped = await ask({ cmd: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));

    const results = {
      measuredAt: new Date().toISOString(),
      options,
      dataset: {
        sessions: seeded.sessions.length + seeded.smallIds.length,
        bigSessions: seeded.sessions.length,
        transcriptMB: seeded.transcriptBytes / MB,
        largestMB: largest.bytes / MB,
      },
      seed: {
        mbPerSecond: seeded.transcriptBytes / MB / (seeded.seedMs / 1000),
        maxStallMs: seeded.maxStallMs,
        snapshotExportMsAt10k: seeded.snapshotExportMs,
      },
      startup: {
        untilFirstAnswerMs: startupMs,
        openAndListenMs: ready.openMs,
        stallMs: startPhase.maxStallMs,
      },
      getOneMB: {
        sessionMB: oneMB.bytes / MB,
        requestsPerSecond: getOne.requestsPerSecond,
        bareRequestsPerSecond: bareOne.requestsPerSecond,
        ratio: getOne.requestsPerSecond / bareOne.requestsPerSecond,
        p99Ms: getOne.latencyMs.p99,
        errors: getOne.errors + getOne.non2xx,
        maxStallMs: getPhase.maxStallMs,
      },
      getLargest: {
        firstByteMs: median(largestRuns.map((r) => r.firstByteMs)),
        totalMs: median(largestRuns.map((r) => r.totalMs)),
        bytes: largestRuns[0]?.bytes,
        maxStallMs: largestPhase.maxStallMs,
      },
      listPage: {
        p50Ms: list.latencyMs.p50,
        p99Ms: list.latencyMs.p99,
        requestsPerSecond: list.requestsPerSecond,
        errors: list.errors + list.non2xx,
        maxStallMs: listPhase.maxStallMs,
      },
      appends: {
        perSecond: Number(appends.appends) / Number(appends.seconds),
        maxStallMs: appends.maxStallMs,
      },
      snapshotInServer: {
        exportMs: (snapshot.snapshot as { exportMs: number }).exportMs,
        maxStallMs: snapshot.maxStallMs,
      },
      memory: { steadyRssMB: listPhase.rssMB, peakRssMB: stopped.peakRssMB },
    };
    const targets = [
      [
        'peak RSS of the server',
        `${Number(stopped.peakRssMB).toFixed(0)} MB`,
        Number(stopped.peakRssMB) < 300,
        'under 300 MB',
      ],
      ['start-up until the first answer', `${startupMs.toFixed(0)} ms`, startupMs < 1000, 'under 1 s'],
      [
        'longest event-loop stall (server phases, snapshot, seeding)',
        `${Math.max(Number(getPhase.maxStallMs), Number(largestPhase.maxStallMs), Number(listPhase.maxStallMs), Number(appends.maxStallMs), Number(snapshot.maxStallMs), seeded.maxStallMs).toFixed(0)} ms`,
        Math.max(
          Number(getPhase.maxStallMs),
          Number(largestPhase.maxStallMs),
          Number(listPhase.maxStallMs),
          Number(appends.maxStallMs),
          Number(snapshot.maxStallMs),
          seeded.maxStallMs,
        ) <= 50,
        'at most 50 ms',
      ],
      [
        'GET one 1 MB session vs the bare route',
        `${results.getOneMB.ratio.toFixed(2)}x`,
        results.getOneMB.ratio >= 0.5,
        'at least 0.5x',
      ],
      [
        'largest session, first byte',
        `${results.getLargest.firstByteMs.toFixed(1)} ms`,
        results.getLargest.firstByteMs < 50,
        'under 50 ms',
      ],
      ['list page of 50, p50', `${list.latencyMs.p50} ms`, list.latencyMs.p50 < 5, 'under 5 ms'],
      [
        'durable appends per second (32 sessions)',
        results.appends.perSecond.toFixed(0),
        results.appends.perSecond >= 5000,
        'at least 5,000',
      ],
      [
        'snapshot export at 10,000 sessions',
        `${seeded.snapshotExportMs.toFixed(0)} ms`,
        seeded.snapshotExportMs <= 50,
        'at most 50 ms',
      ],
    ] as const;
    writeFileSync(outFile, `${JSON.stringify({ ...results, targets }, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n\n`);
    for (const [what, value, met, target] of targets) {
      process.stdout.write(`${met ? 'PASS' : 'MISS'}  ${what}: ${value} (target ${target})\n`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
