import { Worker } from 'node:worker_threads';

/**
 * Samples the process's resident set size every 100 ms from a worker thread, so the
 * samples keep coming while the main thread is busy in a long synchronous step (seeding,
 * `export()`). RSS is per process: the worker sees the whole of it.
 */

// Plain JavaScript: an eval'd worker does not go through the TypeScript loader.
const SAMPLER_WORKER = `
const { workerData } = require('node:worker_threads');
const peaks = new Float64Array(workerData.peaks);
const phase = new Int32Array(workerData.phase);
setInterval(() => {
  const rss = process.memoryUsage.rss();
  const current = Atomics.load(phase, 0);
  if (rss > peaks[0]) peaks[0] = rss;
  if (rss > peaks[current]) peaks[current] = rss;
}, workerData.intervalMs);
`;

export class RssSampler {
  private readonly peaks: Float64Array;
  private readonly phase: Int32Array;
  private readonly names: string[] = ['overall'];
  private readonly worker: Worker;

  constructor(intervalMs = 100, maxPhases = 32) {
    const peaks = new SharedArrayBuffer(8 * (maxPhases + 1));
    const phase = new SharedArrayBuffer(4);
    this.peaks = new Float64Array(peaks);
    this.phase = new Int32Array(phase);
    this.worker = new Worker(SAMPLER_WORKER, { eval: true, workerData: { peaks, phase, intervalMs } });
    this.worker.unref();
  }

  /** Attributes the samples from now on to `name` (as well as to the overall peak). */
  enter(name: string): void {
    let index = this.names.indexOf(name);
    if (index < 0) {
      if (this.names.length >= this.peaks.length) throw new Error('too many phases');
      index = this.names.push(name) - 1;
    }
    this.record(index);
    Atomics.store(this.phase, 0, index);
  }

  /** Peak RSS in bytes, overall and per phase, including the current moment. */
  report(): { overall: number; phases: Record<string, number> } {
    this.record(Atomics.load(this.phase, 0));
    const phases: Record<string, number> = {};
    this.names.slice(1).forEach((name, i) => (phases[name] = this.peaks[i + 1] ?? 0));
    return { overall: this.peaks[0] ?? 0, phases };
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  private record(index: number): void {
    const rss = process.memoryUsage.rss();
    if (rss > (this.peaks[0] ?? 0)) this.peaks[0] = rss;
    if (rss > (this.peaks[index] ?? 0)) this.peaks[index] = rss;
  }
}
