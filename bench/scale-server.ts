import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { startServer } from '../src-main/server/start.js';
import type { Message } from '../src-shared/sessions.js';
import { startStallTrace } from './stall-trace.js';

/**
 * The server `bench/scale.ts` measures, in a process of its own: `startServer`, exactly as
 * `sessiondesk serve` runs it, plus a channel to the benchmark (IPC) that reports the
 * longest event-loop stall and the memory of this process per phase, and runs the durable
 * append workload in-process (agents append in the server's process too).
 *
 * Usage (by bench/scale.ts, which builds it into out/bench/): node out/bench/scale-server.mjs DATA_DIR
 */

type Command =
  | { cmd: 'phase'; name: string }
  | { cmd: 'snapshot' }
  | { cmd: 'appends'; sessionIds: string[]; workspaceId: string; seconds: number; bytes: number }
  | { cmd: 'append-text'; sessionId: string; workspaceId: string; text: string }
  | { cmd: 'stop' };

const started = performance.now();
const dataDir = process.argv[2];
if (!dataDir || !process.send) throw new Error('usage: run by bench/scale.ts with a data directory');
const send = (message: unknown) => process.send?.(message);

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const trace = await startStallTrace(process.env.BENCH_STALL_TRACE);

/** The highest peak RSS read so far: each phase's peak is read, then reset. */
let peakSoFarMB = 0;

function memory(): { rssMB: number; peakRssMB: number; phasePeakRssMB: number } {
  // VmHWM: the peak resident set size of this process since it started, or since the last
  // reset: writing 5 to clear_refs resets it, so each phase reads its own peak.
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  const phasePeakRssMB = kb('VmHWM') / 1024;
  peakSoFarMB = Math.max(peakSoFarMB, phasePeakRssMB);
  writeFileSync('/proc/self/clear_refs', '5');
  return { rssMB: kb('VmRSS') / 1024, peakRssMB: peakSoFarMB, phasePeakRssMB };
}

function endPhase(): { maxStallMs: number; p99StallMs: number } & ReturnType<typeof memory> {
  const result = { maxStallMs: loop.max / 1e6, p99StallMs: loop.percentile(99) / 1e6, ...memory() };
  loop.reset();
  return result;
}

const server = await startServer({
  dataDir,
  host: '127.0.0.1',
  port: 0,
  clock: systemClock,
  logger: silentLogger,
  agents: { demoPaceMs: 3_600_000 },
});
const store = server.store;
if (!store) throw new Error('the benchmark serves a data directory');
const repos = createRepositories(store.db);
send({ ready: server.url, openMs: performance.now() - started, ...endPhase() });

process.on('message', (raw) => {
  const command = raw as Command;
  void (async () => {
    if (command.cmd === 'phase') {
      send({ phase: command.name, ...endPhase() });
    } else if (command.cmd === 'snapshot') {
      const info = await store.snapshot();
      send({ snapshot: info, ...endPhase() });
    } else if (command.cmd === 'append-text') {
      const message: Message = {
        type: 'assistant',
        message: { content: [{ type: 'text', text: command.text }] },
      };
      await store.write(() =>
        repos.sessions.appendMessage(
          command.sessionId,
          command.workspaceId,
          message,
          null,
          systemClock.now().toISOString(),
        ),
      );
      send({ appended: true });
    } else if (command.cmd === 'appends') {
      const message: Message = {
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'x'.repeat(Math.max(1, command.bytes - 60)) }] },
      };
      const until = performance.now() + command.seconds * 1000;
      let appends = 0;
      const at = () => systemClock.now().toISOString();
      // One writer per session, each waiting for its own append to be durable: as 32 agents would.
      await Promise.all(
        command.sessionIds.map(async (id) => {
          while (performance.now() < until) {
            await store.write(() =>
              repos.sessions.appendMessage(id, command.workspaceId, message, null, at()),
            );
            appends += 1;
          }
        }),
      );
      send({ appends, seconds: command.seconds, ...endPhase() });
    } else {
      await server.close();
      await trace?.write();
      send({ stopped: true, ...endPhase() });
      process.exit(0);
    }
  })().catch((err: unknown) => {
    send({ error: String((err as Error).stack ?? err) });
  });
});
