// The server's CPU time per search, by kind of query, on a data directory of your own: for
// comparing two checkouts side by side on a busy machine, where wall times say little. Each
// checkout's `serve` is started in turn on a copy of the same data directory (a newer checkout
// migrates it); its CPU at rest (the history follower, the index) is measured first and taken off.
//
//   SEARCH_COST_DATA=DIR SEARCH_COST_KEY=KEY SEARCH_COST_WORDS=words.json \
//     node ./bin/run-ts.js bench/search-query-cost.ts /path/to/checkout-a /path/to/checkout-b
//
// words.json: { "rare": ["…"], "common": ["…"], "prefix": ["ab*"], "phrase": ["\"of the\""] }.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dataDir = process.env.SEARCH_COST_DATA;
const key = process.env.SEARCH_COST_KEY;
const wordsFile = process.env.SEARCH_COST_WORDS;
const rounds = Number(process.env.SEARCH_COST_ROUNDS ?? 6);
const checkouts = process.argv.slice(2);
if (!dataDir || !key || !wordsFile || checkouts.length === 0) {
  console.error(
    'Usage: SEARCH_COST_DATA=DIR SEARCH_COST_KEY=KEY SEARCH_COST_WORDS=FILE … search-query-cost.ts CHECKOUT…',
  );
  process.exit(2);
}
const words = JSON.parse(readFileSync(wordsFile, 'utf8')) as Record<string, string[]>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** User and system CPU of a process so far, in ms (Linux: /proc/PID/stat, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The process that serves: `serve` may start itself again with a heap flag, as its child. */
function servingPid(pid: number): number {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/u);
    return children[0] ? Number(children[0]) : pid;
  } catch {
    return pid;
  }
}

for (const checkout of checkouts) {
  const port = 4700 + Math.floor(Math.random() * 200);
  const copy = mkdtempSync(join(tmpdir(), 'search-cost-'));
  cpSync(dataDir, copy, { recursive: true });
  const child = spawn(
    process.execPath,
    [join(checkout, 'bin', 'sessiondesk.js'), 'serve', '--data-dir', copy, '--port', String(port)],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, SESSIONDESK_NO_BROWSER: '1' } },
  );
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const url = (q: string) => `http://127.0.0.1:${port}/api/search?q=${encodeURIComponent(q)}`;
  const spawnedAt = performance.now();
  for (;;) {
    if (exited) throw new Error(`${checkout}: serve ended before it answered`);
    const answer = await fetch(url('zzzz'), { headers: { 'x-api-key': key } }).catch(() => null);
    if (answer?.ok && ((await answer.json()) as { indexing: { complete: boolean } }).indexing.complete) break;
    await sleep(200);
  }
  // From the start until the index is complete: the first index, for a data directory without one.
  const readyMs = performance.now() - spawnedAt;
  const pid = servingPid(child.pid!);
  const restStart = cpuMs(pid);
  const restAt = performance.now();
  await sleep(8000);
  const restRate = (cpuMs(pid) - restStart) / (performance.now() - restAt);
  console.log(
    `${checkout} (indexed ${(readyMs / 1000).toFixed(1)} s after its start; CPU at rest ${(restRate * 100).toFixed(1)}%; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
  );
  const allTimes: number[] = [];
  for (const [kind, queries] of Object.entries(words)) {
    const times: number[] = [];
    const start = cpuMs(pid);
    const at = performance.now();
    for (let round = 0; round < rounds; round += 1) {
      for (const q of queries) {
        const sent = performance.now();
        await (await fetch(url(q), { headers: { 'x-api-key': key } })).arrayBuffer();
        times.push(performance.now() - sent);
      }
    }
    const used = cpuMs(pid) - start - restRate * (performance.now() - at);
    allTimes.push(...times);
    times.sort((a, b) => a - b);
    console.log(
      `  ${kind}: server CPU ${(used / times.length).toFixed(1)} ms a query, wall p50 ${times[times.length >> 1]!.toFixed(1)} ms`,
    );
  }
  allTimes.sort((a, b) => a - b);
  console.log(`  all kinds: wall p50 ${allTimes[allTimes.length >> 1]!.toFixed(1)} ms`);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(copy, { recursive: true, force: true });
}
