import { spawn } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

type Poll =
  | { outcome: 'refused' | 'reset' }
  | { outcome: 'answered'; status: number; retryAfter: string | null }
  | { outcome: 'hung' };

/** One request as `curl -s -m 2` makes it: an answer, a refused connection, or nothing in 2 s. */
function poll(port: number): Promise<Poll> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let text = '';
    const done = (result: Poll) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ outcome: 'hung' }), 2000);
    // A connection in the placeholder's queue when it hands over is reset: refused, not hung.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') done({ outcome: 'refused' });
      else if (err.code === 'ECONNRESET' || err.code === 'EPIPE') done({ outcome: 'reset' });
      else throw err;
    });
    socket.on('end', () => done({ outcome: 'reset' }));
    socket.on('connect', () => socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const head = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/u.exec(text);
      if (head) {
        const retryAfter = /^retry-after: *(\S+)/imu.exec(head[2] ?? '')?.[1] ?? null;
        done({ outcome: 'answered', status: Number(head[1]), retryAfter });
      }
    });
  });
}

interface Started {
  exitCode: Promise<number | null>;
  stderr: () => string;
  stop: () => Promise<number | null>;
}

const children: Started[] = [];
const held: Socket[] = [];
afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  await Promise.all(children.splice(0).map((child) => child.stop()));
});

/**
 * Starts `serve` on a fixed port while clients keep connecting: raw TCP connections that are
 * opened and held without a byte sent (a tab reconnecting, `curl` with no time limit), and a
 * poller asking `GET /` every 200 ms. Resolves once the server prints its URL.
 */
async function startUnderClients(
  extra: string[],
): Promise<{ started: Started; polls: Poll[]; ms: number; port: number }> {
  const port = await freePort();
  const began = Date.now();
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--port', String(port), '--data-dir', tempDir(), ...extra],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exitCode = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started: Started = {
    exitCode,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exitCode;
    },
  };
  children.push(started);

  const polls: Poll[] = [];
  let up = false;
  const holder = setInterval(() => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    held.push(socket);
  }, 20);
  const poller = (async () => {
    while (!up && child.exitCode === null) {
      polls.push(await poll(port));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const deadline = Date.now() + 25_000;
  while (!/running at http/u.test(stdout) && child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  up = true;
  clearInterval(holder);
  await poller;
  return { started, polls, ms: Date.now() - began, port };
}

describe.each([[[]], [['--demo']]])('serve %j with clients connecting all through start-up', (extra) => {
  it('comes up, answers every client or refuses it, and never hangs', async () => {
    const { started, polls, ms, port } = await startUnderClients(extra);
    expect(started.stderr()).not.toMatch(/unexpected error/u);
    // Up, and still running once the held connections go away.
    expect(ms).toBeLessThan(25_000);
    for (const socket of held.splice(0)) socket.destroy();
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.filter((p) => p.outcome === 'hung')).toEqual([]);
    // An answer given while the data opens says when to come back.
    for (const p of polls) {
      if (p.outcome === 'answered' && p.status === 503) expect(p.retryAfter).toMatch(/^\d+$/u);
    }
    const exited = await Promise.race([
      started.exitCode,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 500)),
    ]);
    expect(exited).toBe('running');
    expect(await poll(port)).toEqual({ outcome: 'answered', status: 200, retryAfter: null });
    expect(await started.stop()).toBe(0);
  });
});
