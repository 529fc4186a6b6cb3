import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';

/**
 * Load generation. autocannon and the latency probe run on worker threads, so the event
 * loop of the server under test (the main thread) does not also have to drive the load.
 */

export interface BenchRequest {
  method: 'GET' | 'PATCH';
  path: string;
  body?: string;
}

export interface LoadResult {
  connections: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  bytesPerSecond: number;
}

export async function runLoad(options: {
  url: string;
  requests: BenchRequest[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    timeout: 30,
    workers: 1,
    headers: options.headers,
    requests: options.requests.map((r) => ({
      method: r.method,
      path: r.path,
      ...(r.body === undefined ? {} : { body: r.body }),
    })),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = stat.count ?? 0;
  return {
    connections: options.connections,
    seconds: result.duration,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    bytesPerSecond: result.throughput.average,
  };
}

export interface ProbeResult {
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  failures: number;
}

// Plain JavaScript: an eval'd worker does not go through the TypeScript loader.
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, requests, headers, count, warmup, maxMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function send(r) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const h = { ...headers };
    if (r.body !== undefined) h['content-length'] = Buffer.byteLength(r.body);
    const req = http.request(url + r.path, { method: r.method, agent, headers: h }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode }));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
(async () => {
  const samples = [];
  let failures = 0;
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < warmup + count && performance.now() < deadline; i += 1) {
    const { ms, status } = await send(requests[i % requests.length]);
    if (status < 200 || status >= 300) failures += 1;
    if (i >= warmup) samples.push(ms);
  }
  agent.destroy();
  parentPort.postMessage({ samples, failures });
})().catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));
`;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/**
 * One connection, one request at a time, timed to the microsecond: the latency of a
 * single request on an idle server (autocannon's histogram has 1 ms resolution).
 */
export function probeLatency(options: {
  url: string;
  requests: BenchRequest[];
  headers: Record<string, string>;
  count: number;
  warmup: number;
  maxMs: number;
}): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(PROBE_WORKER, { eval: true, workerData: options });
    worker.once('error', reject);
    worker.once('message', (message: { samples?: number[]; failures?: number; error?: string }) => {
      void worker.terminate();
      if (message.error !== undefined || !message.samples) {
        reject(new Error(`latency probe failed: ${message.error ?? 'no samples'}`));
        return;
      }
      const sorted = [...message.samples].sort((a, b) => a - b);
      resolve({
        samples: sorted.length,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        failures: message.failures ?? 0,
      });
    });
  });
}

/** The floor: Fastify sending a precomputed JSON text of a given size, nothing else. */
export async function startBareServer(payloadBytes: number): Promise<{ app: FastifyInstance; url: string }> {
  const filler = 'x'.repeat(Math.max(0, payloadBytes - '{"session":""}'.length));
  const payload = `{"session":"${filler}"}`;
  const app = Fastify({ logger: false });
  app.get('/bare', (_request, reply) => reply.type('application/json; charset=utf-8').send(payload));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: listeningUrl(app) };
}

export function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  return `http://127.0.0.1:${address.port}`;
}
