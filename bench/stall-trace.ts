import { subscribe } from 'node:diagnostics_channel';
import { Session } from 'node:inspector/promises';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * A diagnostic for the benchmarks' server, off unless BENCH_STALL_TRACE names a folder: where
 * the event loop's longest stalls go. A timer every 5 ms notes each gap of over 45 ms (when it
 * ended, how long), and a CPU profile of the whole run is written beside them on `stop`;
 * `stalls.json`'s `endedAtUs` is on the profile's clock (`startTime`, `timeDeltas`), so the
 * samples of a stall are those between `endedAtUs - gapMs * 1000` and `endedAtUs`. The profile
 * opens in Chrome's DevTools (Performance › Load profile); BENCH_STALL_TRACE_CPU=0 leaves it
 * out (it costs some speed and memory: the figures of a traced run are not the benchmark's).
 *
 * `memory.json` says where the process's memory is each time its RSS reaches a new high (by
 * 4 MB or more): V8's own figures, and the resident memory of its mappings by kind from
 * /proc/self/smaps (the brk heap, anonymous mappings by size, the program, other files), and
 * each thread's V8 heap (the main thread's and every worker's, by its name: what its heap holds
 * in pages, what is live in it, and what V8 allocated with malloc beside it; the main
 * thread's by space too).
 * BENCH_STALL_TRACE_HEAP=SECONDS writes a heap snapshot of the main thread that many seconds
 * after the process started (`heap.heapsnapshot`; the process stops for seconds meanwhile).
 */
export interface StallTrace {
  /** Writes `stalls.json` and `server.cpuprofile` into the folder. */
  write(): Promise<void>;
}

const TICK_MS = 5;
const NOTED_GAP_MS = 45;
const MEMORY_EVERY_MS = 250;
const MEMORY_STEP_MB = 4;
const MB = 1024 * 1024;

/** Resident MB of the process's mappings, by kind. */
function residentByKind(): Record<string, number> {
  const kinds: Record<string, number> = {};
  let kind = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/u.exec(line);
    if (mapping) {
      const size = (parseInt(mapping[2] as string, 16) - parseInt(mapping[1] as string, 16)) / MB;
      const path = mapping[3] ?? '';
      kind = path.startsWith('[')
        ? path
        : path
          ? path.includes('/node')
            ? 'program'
            : 'files'
          : size >= 64
            ? 'anon >= 64 MiB'
            : size > 1
              ? 'anon 1-64 MiB'
              : 'anon <= 1 MiB';
    } else if (line.startsWith('Rss:')) {
      kinds[kind] = (kinds[kind] ?? 0) + Number(/(\d+) kB/u.exec(line)?.[1] ?? 0) / 1024;
    }
  }
  for (const key of Object.keys(kinds)) kinds[key] = Math.round(kinds[key] as number);
  return kinds;
}

/** A thread's V8 heap in MB: its pages, what is live in them, what V8 holds beside them. */
function heapOf(stats: {
  total_physical_size: number;
  used_heap_size: number;
  malloced_memory: number;
}): Record<string, number> {
  return {
    physical: Math.round(stats.total_physical_size / MB),
    used: Math.round(stats.used_heap_size / MB),
    malloced: Math.round(stats.malloced_memory / MB),
  };
}

export async function startStallTrace(folder: string | undefined): Promise<StallTrace | null> {
  if (!folder) return null;
  // Made now, not when the run ends: a folder that does not exist yet would lose the whole trace.
  mkdirSync(folder, { recursive: true });
  const cpu = process.env.BENCH_STALL_TRACE_CPU !== '0';
  const session = new Session();
  if (cpu) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    await session.post('Profiler.start');
  }
  // The profile's clock is the monotonic one in microseconds, as process.hrtime's.
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  const stalls: Array<{ endedAtUs: number; gapMs: number }> = [];
  let last = nowUs();
  const timer = setInterval(() => {
    const now = nowUs();
    const gapMs = (now - last) / 1000 - TICK_MS;
    if (gapMs > NOTED_GAP_MS) stalls.push({ endedAtUs: now, gapMs: Math.round(gapMs) });
    last = now;
  }, TICK_MS);
  timer.unref();
  // Node announces each worker thread it starts; those still running are sampled with the rest.
  const workers = new Set<Worker>();
  subscribe('worker_threads', (message) => {
    const { worker } = message as { worker: Worker };
    workers.add(worker);
    worker.once('exit', () => workers.delete(worker));
  });
  const memory: Array<Record<string, unknown>> = [];
  let highMB = 0;
  let sampling = false;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    if (sampling || usage.rss / MB < highMB + MEMORY_STEP_MB) return;
    highMB = usage.rss / MB;
    sampling = true;
    const v8 = Object.fromEntries(Object.entries(usage).map(([key, bytes]) => [key, Math.round(bytes / MB)]));
    const resident = residentByKind();
    const heaps: Record<string, Record<string, number>> = { main: heapOf(getHeapStatistics()) };
    // The main thread's by space: large objects (over 128 KiB, a long line's string) are
    // allocated in the old generation at once and freed only by a full collection.
    for (const space of getHeapSpaceStatistics())
      heaps[`main ${space.space_name}`] = {
        physical: Math.round(space.physical_space_size / MB),
        used: Math.round(space.space_used_size / MB),
      };
    void Promise.all(
      [...workers].map(async (worker, i) => {
        const name = `${worker.threadName ?? 'worker'} ${i}`;
        heaps[name] = heapOf(await worker.getHeapStatistics());
      }),
    )
      .catch(() => {})
      .then(() => {
        memory.push({ atS: Math.round(process.uptime()), ...v8, resident, heaps });
        sampling = false;
      });
  }, MEMORY_EVERY_MS);
  sampler.unref();
  const heapAtS = Number(process.env.BENCH_STALL_TRACE_HEAP ?? NaN);
  if (Number.isFinite(heapAtS)) {
    setTimeout(
      () => writeHeapSnapshot(join(folder, 'heap.heapsnapshot')),
      Math.max(0, heapAtS - process.uptime()) * 1000,
    ).unref();
  }
  return {
    async write() {
      clearInterval(timer);
      clearInterval(sampler);
      writeFileSync(join(folder, 'stalls.json'), JSON.stringify(stalls, null, 1));
      writeFileSync(join(folder, 'memory.json'), JSON.stringify(memory, null, 1));
      if (!cpu) return;
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(join(folder, 'server.cpuprofile'), JSON.stringify(profile));
    },
  };
}
