import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, spawnServe, type ServeProcess } from '../test/helpers/cli.js';

/** What `bench/postgres.ts` asks of a `sessiondesk serve` process, and how it times the answers. */

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  /** The slowest sample. */
  maxMs: number;
}

export function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  // Nearest rank: p99 of 100 samples is the 99th, not the slowest (which maxMs gives).
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? NaN };
}

function newestUnder(dir: string): number {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return time;
}

/**
 * The bench measures the built command line, as `sessiondesk serve` runs once installed: a
 * build older than the sources would make bin/sessiondesk.js compile them at every start.
 */
export function requireCurrentBuild(): void {
  const built = join(ROOT, 'out', 'cli', 'sessiondesk.mjs');
  let builtAt: number;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    throw new Error(`${built} is missing: run \`npm run build\` first`);
  }
  if (builtAt <= Math.max(newestUnder(join(ROOT, 'src-main')), newestUnder(join(ROOT, 'src-shared'))))
    throw new Error(`${built} is older than the sources: run \`npm run build\` first`);
}

/** The resident set of a process now and its peak so far, from /proc. */
export function rssOf(pid: number): { rssMB: number; peakRssMB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMB: kb('VmRSS') / 1024, peakRssMB: kb('VmHWM') / 1024 };
}

export interface BenchServer {
  name: string;
  serve: ServeProcess;
  url: string;
  pid: number;
  key: string;
  organizationId: string;
  cookie: string;
}

/**
 * `sessiondesk serve` on 127.0.0.1 with a port of its own, its demo agent paced an hour a step:
 * a follow-up's run waits at its first step until the next follow-up stops it.
 */
export async function startBenchServer(
  name: string,
  args: string[],
  account: { key: string; organizationId: string; email: string; password: string },
): Promise<BenchServer> {
  // A team server's data directory must exist already (`serve --database` does not make it).
  const dataDir = args[args.indexOf('--data-dir') + 1];
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const serve = await spawnServe(['--host', '127.0.0.1', '--port', '0', ...args], {
    SESSIONDESK_DEMO_PACE_MS: '3600000',
  });
  const pid = serve.child.pid;
  if (pid === undefined) throw new Error(`${name}: the server has no pid`);
  if (!serve.url.startsWith('http://127.0.0.1:'))
    throw new Error(`${name} is not on 127.0.0.1: ${serve.url}`);
  const signIn = await fetch(`${serve.url}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: serve.url },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  if (signIn.status !== 200)
    throw new Error(`${name}: sign-in answered ${signIn.status}: ${await signIn.text()}`);
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return {
    name,
    serve,
    url: serve.url,
    pid,
    key: account.key,
    organizationId: account.organizationId,
    cookie,
  };
}

export interface Answer {
  ms: number;
  status: number;
  body: string;
}

/** One request, its whole answer read; timed from sending to the last byte. */
export async function ask(
  server: BenchServer,
  path: string,
  init: { method?: string; body?: unknown; as?: 'key' | 'person' } = {},
): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.as === 'person' ? { cookie: server.cookie, origin: server.url } : { 'x-api-key': server.key }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body };
}

/** `ask`, failing on any answer but `expected`. */
export async function expect(
  server: BenchServer,
  path: string,
  init: Parameters<typeof ask>[2] & { expected?: number } = {},
): Promise<Answer> {
  const answer = await ask(server, path, init);
  const expected = init.expected ?? 200;
  if (answer.status !== expected)
    throw new Error(
      `${server.name}: ${init.method ?? 'GET'} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`,
    );
  return answer;
}

/**
 * `clients` loops at once, each repeating `step` until `seconds` pass; `step` returns the
 * milliseconds to count (its own timing) or throws. Bounded by time and by `maxSteps`.
 */
export async function loadFor(
  seconds: number,
  clients: number,
  maxSteps: number,
  step: (client: number, n: number) => Promise<number>,
): Promise<Latency & { perSecond: number }> {
  const until = performance.now() + seconds * 1000;
  const samples: number[] = [];
  const started = performance.now();
  let steps = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; performance.now() < until && steps < maxSteps; n += 1) {
        steps += 1;
        samples.push(await step(client, n));
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { ...latency(samples), perSecond: samples.length / elapsed };
}
