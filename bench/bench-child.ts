import { fork, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { NODE_FLAGS, nodeEnvFor } from '../bin/node-flags.js';

/** The benchmarks' server in a process of its own (bench/scale-server.ts), and requests to it. */

/** Builds bench/scale-server.ts into out/bench/, as the benchmarks run it; returns its path. */
export async function buildBenchServer(): Promise<string> {
  const serverScript = fileURLToPath(new URL('../out/bench/scale-server.mjs', import.meta.url));
  await build({
    entryPoints: [fileURLToPath(new URL('./scale-server.ts', import.meta.url))],
    outfile: serverScript,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22.13',
    packages: 'external',
    logLevel: 'warning',
  });
  return serverScript;
}

export function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ ms: number; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The bench's server: startServer in a process of its own, with an IPC channel. */
export async function startChild(script: string, dataDir: string) {
  const spawned = performance.now();
  // With the V8 flags `sessiondesk serve` runs with (bin/node-flags.js), then those of
  // BENCH_SERVER_NODE_FLAGS (space-separated): what a flag would change, tried side by side.
  const tried = (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = fork(script, [dataDir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: nodeEnvFor('serve', process.env),
    execArgv: [...process.execArgv, ...NODE_FLAGS, ...tried],
  });
  const replies: Array<Record<string, unknown>> = [];
  let wake: (() => void) | null = null;
  child.on('message', (m) => {
    replies.push(m as Record<string, unknown>);
    wake?.();
  });
  const reply = async (): Promise<Record<string, unknown>> => {
    while (replies.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const next = replies.shift() as Record<string, unknown>;
    if (next.error) throw new Error(`server: ${String(next.error)}`);
    return next;
  };
  const ask = async (command: object) => {
    child.send(command);
    return reply();
  };
  const ready = await reply();
  return { url: String(ready.ready), ready, ask, spawned, child };
}
