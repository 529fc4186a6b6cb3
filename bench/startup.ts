import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCorpus } from './claude-history-corpus.js';

/**
 * `npm run bench:startup [-- CHECKOUT…]`: how long `sessiondesk serve` takes to answer the
 * sessions list, and its peak memory, on a heavy user's history imported through the CLI, as a
 * person does it: `history import` with no server, then `serve` (its first start, which builds
 * the search index), then `serve` again (a restart). Each checkout given (default: this one; it
 * must be built, `npm run build`) prepares a data directory with its own CLI from the same
 * corpus, and the checkouts take turns, round after round, so that they are measured side by side
 * on the same machine at the same time.
 *
 * STARTUP_MB (default 390: 308 sessions, the held-out scale check's size) of Claude Code files
 * are written, or STARTUP_CORPUS names a `~/.claude` folder to use; STARTUP_ROUNDS (default 3).
 * Results go to bench/startup-results.json and stdout.
 */

const MB = 1024 * 1024;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const targetMB = Number(process.env.STARTUP_MB ?? 390);
const rounds = Number(process.env.STARTUP_ROUNDS ?? 3);
const outFile = process.env.STARTUP_OUT ?? fileURLToPath(new URL('./startup-results.json', import.meta.url));
const checkouts = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : [ROOT]).map((c) => resolve(c));
const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** User and system CPU of a process so far, in ms (Linux: /proc/PID/stat, in ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The process's peak resident memory so far (VmHWM), in MB. */
function peakRssMB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

interface Prepared {
  checkout: string;
  dataDir: string;
  key: string;
}

/** A data directory made by the checkout's own CLI: an owner, a workspace, a key, the import. */
function prepare(checkout: string, corpus: string, work: string): Prepared {
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [join(checkout, 'bin', 'sessiondesk.js'), ...args], {
      encoding: 'utf8',
    }).trim();
  const dataDir = mkdtempSync(join(work, 'data-'));
  const password = 'bench password, not secret';
  cli(
    'user',
    'create',
    '--email',
    'ada@bench.test',
    '--name',
    'Ada',
    '--password',
    password,
    '--data-dir',
    dataDir,
  );
  const created = cli(
    'workspace',
    'create',
    '--name',
    'History',
    '--owner',
    'ada@bench.test',
    '--data-dir',
    dataDir,
  );
  const organizationId = created;
  const key = cli('key', 'create', '--workspace', organizationId, '--data-dir', dataDir);
  const imported = performance.now();
  progress(
    `${checkout}: ${cli('history', 'import', '--workspace', organizationId, '--claude-dir', corpus, '--data-dir', dataDir).split('\n')[0]}`,
  );
  progress(`  imported in ${((performance.now() - imported) / 1000).toFixed(1)} s`);
  return { checkout, dataDir, key };
}

interface Start {
  /** From spawning `serve` until the sessions list answered 200. */
  listMs: number;
  /** The server's CPU by then. */
  listCpuMs: number;
  /** Until search answers with the index complete. */
  indexedMs: number;
  /** The server's peak RSS up to 2 s after the index was complete. */
  peakRssMB: number;
}

async function start(prepared: Prepared, dataDir: string): Promise<Start> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const spawnedAt = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(prepared.checkout, 'bin', 'sessiondesk.js'),
      'serve',
      '--data-dir',
      dataDir,
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SESSIONDESK_NO_BROWSER: '1' } },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const headers = { authorization: `Bearer ${prepared.key}` };
  const base = `http://127.0.0.1:${port}`;
  try {
    let listMs = 0;
    let listCpuMs = 0;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve ended before it answered: ${stderr}`);
      const answered = await fetch(`${base}/api/sessions?limit=50`, { headers }).then(
        async (response) => (await response.arrayBuffer(), response.status === 200),
        () => false,
      );
      if (answered) {
        listMs = performance.now() - spawnedAt;
        listCpuMs = cpuMs(child.pid!);
        break;
      }
      await sleep(5);
    }
    let indexedMs = 0;
    while (indexedMs === 0) {
      const response = await fetch(`${base}/api/search?q=marker&limit=1`, { headers });
      const answer = (await response.json()) as { indexing?: { complete: boolean } };
      if (answer.indexing?.complete) indexedMs = performance.now() - spawnedAt;
      else await sleep(100);
    }
    await sleep(2000);
    return { listMs, listCpuMs, indexedMs, peakRssMB: peakRssMB(child.pid!) };
  } finally {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
}

/** A checkout as the results name it: its commit, and whether files differ from it. */
function label(checkout: string): string {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with changes' : ''}`;
  } catch {
    return checkout;
  }
}

const median = (values: number[]) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  for (const checkout of checkouts) {
    if (!existsSync(join(checkout, 'out', 'cli', 'sessiondesk.mjs')))
      throw new Error(`${checkout} is not built: run npm run build there`);
  }
  const work = mkdtempSync(join(tmpdir(), 'sessiondesk-startup-bench-'));
  try {
    let corpus = process.env.STARTUP_CORPUS;
    if (!corpus) {
      corpus = join(work, 'claude');
      progress(`writing about ${targetMB} MB of Claude Code session files into ${corpus}`);
      const written = writeCorpus(corpus, targetMB, progress);
      progress(`wrote ${(written.bytes / MB).toFixed(0)} MB in ${written.sessions} sessions`);
    }
    const prepared = checkouts.map((checkout) => prepare(checkout, corpus, work));
    const results = new Map<string, { first: Start[]; restart: Start[] }>(
      checkouts.map((checkout) => [checkout, { first: [], restart: [] }]),
    );
    for (let round = 1; round <= rounds; round += 1) {
      for (const one of prepared) {
        const copy = mkdtempSync(join(work, 'run-'));
        cpSync(one.dataDir, copy, { recursive: true });
        const first = await start(one, copy);
        const restart = await start(one, copy);
        rmSync(copy, { recursive: true, force: true });
        results.get(one.checkout)!.first.push(first);
        results.get(one.checkout)!.restart.push(restart);
        progress(
          `round ${round} ${one.checkout}: first ${first.listMs.toFixed(0)} ms (${first.peakRssMB.toFixed(0)} MB), restart ${restart.listMs.toFixed(0)} ms (${restart.peakRssMB.toFixed(0)} MB)`,
        );
      }
    }
    const summary = Object.fromEntries(
      [...results].map(([checkout, { first, restart }]) => [
        label(checkout),
        Object.fromEntries(
          (
            [
              ['first', first],
              ['restart', restart],
            ] as const
          ).map(([name, starts]) => [
            name,
            {
              listMs: Math.round(median(starts.map((s) => s.listMs))),
              listCpuMs: Math.round(median(starts.map((s) => s.listCpuMs))),
              indexedMs: Math.round(median(starts.map((s) => s.indexedMs))),
              peakRssMB: Math.round(median(starts.map((s) => s.peakRssMB))),
            },
          ]),
        ),
      ]),
    );
    const report = { at: new Date().toISOString(), loadavg: loadavg(), rounds, summary };
    writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`Start-up of serve after a history import (median of ${rounds} rounds, side by side):`);
    for (const [checkout, phases] of Object.entries(summary)) {
      for (const [phase, s] of Object.entries(phases)) {
        console.log(
          `  ${checkout} ${phase.padEnd(8)} list ${String(s.listMs).padStart(5)} ms (CPU ${s.listCpuMs} ms), indexed ${s.indexedMs} ms, peak RSS ${s.peakRssMB} MB`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
