import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBenchServer, get, startChild } from './bench-child.js';
import { percentile } from './load.js';
import { LAST_MARKER, QUERIES, RARE, seed } from './search-corpus.js';

/**
 * `npm run bench:search` (and the last part of `npm run bench`): full-text search over
 * Claude-Code-shaped transcripts. Seeds SEARCH_BENCH_MB of them (default 300; 3072 for the
 * 3 GB proof) through the product's store, starts the server in a process of its own
 * (bench/scale-server.ts, as `sessiondesk serve` runs) and measures, side by side in one run:
 * the first index of everything in the background while the list is read (its latency, the
 * longest event-loop stall, peak RSS), queries of four kinds against `rg -F` over the same
 * files with a warm page cache, the index's size against the transcripts', a restart until the
 * first search answers, and an appended message until it is found. Results go to
 * bench/search-results.json and stdout.
 */

const MB = 1024 * 1024;
const targetMB = Number(process.env.SEARCH_BENCH_MB ?? 300);
if (!Number.isFinite(targetMB) || targetMB <= 0) throw new Error('SEARCH_BENCH_MB must be a positive number');
const outFile = process.env.SEARCH_OUT ?? fileURLToPath(new URL('./search-results.json', import.meta.url));
const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);

/** What `rg -F` looks for to answer the same query by brute force: its longest literal. */
const literalOf = (q: string) =>
  q
    .replace(/["*]/gu, '')
    .split(' ')
    .sort((a, b) => b.length - a.length)[0] as string;

function rgMs(term: string, dir: string): number {
  const started = performance.now();
  try {
    execFileSync('rg', ['-a', '-F', '-i', '-c', '--no-messages', term, dir], {
      stdio: ['ignore', 'ignore', 'ignore'],
    });
  } catch (err) {
    // Exit status 1 is "no match": still a full scan.
    if ((err as { status?: number }).status !== 1) throw err;
  }
  return performance.now() - started;
}

function dirBytes(dir: string, match: (name: string) => boolean): number {
  return readdirSync(dir)
    .filter(match)
    .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sessiondesk-search-'));
  try {
    progress(`seeding about ${targetMB} MB of transcripts into ${dataDir}`);
    const seeded = await seed(dataDir, targetMB, { progress });
    const transcriptMB = seeded.transcriptBytes / MB;
    progress(
      `seeded ${transcriptMB.toFixed(0)} MB in ${seeded.sessions} sessions, ${(seeded.seedMs / 1000).toFixed(1)} s`,
    );

    const serverScript = await buildBenchServer();
    const headers = { 'x-api-key': seeded.apiKey };
    const searchUrl = (url: string, q: string) => `${url}/api/search?q=${encodeURIComponent(q)}&limit=20`;

    // 1. The first index, in the background, while the list is read one request at a time.
    let server = await startChild(serverScript, dataDir);
    await server.ask({ cmd: 'phase', name: 'start' });
    const indexStarted = performance.now();
    const listMs: number[] = [];
    let indexMs = 0;
    for (let i = 0; ; i += 1) {
      listMs.push((await get(`${server.url}/api/sessions?limit=50`, headers)).ms);
      if (i % 10 === 0) {
        const found = await get(searchUrl(server.url, LAST_MARKER), headers);
        if (found.body.includes(seeded.lastSessionId)) {
          indexMs = performance.now() - indexStarted;
          break;
        }
        if (performance.now() - indexStarted > 20 * 60_000)
          throw new Error('the first index took over 20 minutes');
        if (i % 500 === 0)
          progress(`  indexing… ${((performance.now() - indexStarted) / 1000).toFixed(0)} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const indexPhase = await server.ask({ cmd: 'phase', name: 'index' });
    listMs.sort((a, b) => a - b);
    progress(`indexed in ${(indexMs / 1000).toFixed(1)} s; list p99 ${percentile(listMs, 99).toFixed(1)} ms`);

    // 2. Queries, each kind against rg -F over the same files, the page cache warm for both.
    const transcriptsDir = join(dataDir, 'transcripts');
    rgMs('warm the page cache', transcriptsDir);
    const queries: Record<string, { p50: number; p99: number; rgP50: number; hits: number }> = {};
    const allMs: number[] = [];
    const allRg: number[] = [];
    for (const [kind, list] of Object.entries(QUERIES)) {
      const ms: number[] = [];
      const rg: number[] = [];
      let hits = 0;
      for (const q of list) {
        await get(searchUrl(server.url, q), headers);
        for (let r = 0; r < 5; r += 1) {
          const answer = await get(searchUrl(server.url, q), headers);
          if (answer.status !== 200) throw new Error(`search ${q}: ${answer.status} ${answer.body}`);
          ms.push(answer.ms);
          hits += r === 0 ? (JSON.parse(answer.body) as { hits: unknown[] }).hits.length : 0;
        }
        rg.push(rgMs(literalOf(q), transcriptsDir));
      }
      ms.sort((a, b) => a - b);
      rg.sort((a, b) => a - b);
      allMs.push(...ms);
      allRg.push(...rg);
      queries[kind] = { p50: percentile(ms, 50), p99: percentile(ms, 99), rgP50: percentile(rg, 50), hits };
      progress(
        `  ${kind}: p50 ${queries[kind].p50.toFixed(1)} ms, p99 ${queries[kind].p99.toFixed(1)} ms; rg -F p50 ${queries[kind].rgP50.toFixed(0)} ms`,
      );
    }
    allMs.sort((a, b) => a - b);
    allRg.sort((a, b) => a - b);

    // 3. An appended message, until a search finds it.
    const appendStarted = performance.now();
    await server.ask({
      cmd: 'append-text',
      sessionId: seeded.lastSessionId,
      workspaceId: seeded.organizationId,
      text: 'A late note: zqappendedmarker.',
    });
    let appendFoundMs = Infinity;
    while (performance.now() - appendStarted < 30_000) {
      const found = await get(searchUrl(server.url, 'zqappendedmarker'), headers);
      if (found.body.includes(seeded.lastSessionId)) {
        appendFoundMs = performance.now() - appendStarted;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await server.ask({ cmd: 'stop' });
    const indexBytes = dirBytes(dataDir, (name) => name.startsWith('search.db'));
    // What the index would take merged into one segment (FTS5's optimize), for comparison.
    const { DatabaseSync } = await import('node:sqlite');
    const probe = new DatabaseSync(join(dataDir, 'search.db'));
    const segments = probe.prepare('SELECT count(*) AS n FROM body_data').get();
    const optimizeStarted = performance.now();
    probe.exec("INSERT INTO body(body) VALUES ('optimize'); VACUUM;");
    const optimizeMs = performance.now() - optimizeStarted;
    probe.close();
    const optimizedBytes = dirBytes(dataDir, (name) => name.startsWith('search.db'));
    progress(
      `index ${(indexBytes / MB).toFixed(0)} MB (${String(segments?.n)} data rows); optimized ${(optimizedBytes / MB).toFixed(0)} MB in ${(optimizeMs / 1000).toFixed(1)} s`,
    );

    // 4. A restart, until the first search answers with hits.
    server = await startChild(serverScript, dataDir);
    const upMs = performance.now() - server.spawned;
    const up = performance.now();
    let restartMs = Infinity;
    for (;;) {
      const found = await get(searchUrl(server.url, RARE[0] as string), headers);
      if (found.status === 200 && found.body.includes('"sessionId"')) {
        restartMs = performance.now() - up;
        break;
      }
      if (performance.now() - up > 60_000) break;
    }
    await server.ask({ cmd: 'stop' });

    const all = { p50: percentile(allMs, 50), p99: percentile(allMs, 99), rgP50: percentile(allRg, 50) };
    const results = {
      measuredAt: new Date().toISOString(),
      loadAverage: execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim(),
      corpus: { transcriptMB, sessions: seeded.sessions, seedSeconds: seeded.seedMs / 1000 },
      firstIndex: {
        seconds: indexMs / 1000,
        listP50Ms: percentile(listMs, 50),
        listP99Ms: percentile(listMs, 99),
        maxStallMs: Number(indexPhase.maxStallMs),
        peakRssMB: Number(indexPhase.peakRssMB),
      },
      queries,
      allQueries: { ...all, speedupOverRg: all.rgP50 / all.p50 },
      index: { MB: indexBytes / MB, ofTranscripts: indexBytes / seeded.transcriptBytes },
      restartUntilListeningMs: upMs,
      restartUntilSearchMs: restartMs,
      appendFoundMs,
    };
    const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
    const rows: Array<[string, string, string, string]> = [
      [
        'first index (whole corpus, background)',
        `${results.firstIndex.seconds.toFixed(1)} s for ${transcriptMB.toFixed(0)} MB`,
        '≤ 180 s for 3 GB',
        verdict(results.firstIndex.seconds <= 180 * (transcriptMB / 3072)),
      ],
      [
        'list page p99 while indexing',
        `${results.firstIndex.listP99Ms.toFixed(1)} ms`,
        '≤ 50 ms',
        verdict(results.firstIndex.listP99Ms <= 50),
      ],
      [
        'longest event-loop stall while indexing',
        `${results.firstIndex.maxStallMs.toFixed(0)} ms`,
        '≤ 50 ms',
        verdict(results.firstIndex.maxStallMs <= 50),
      ],
      [
        'peak RSS of the server',
        `${results.firstIndex.peakRssMB.toFixed(0)} MB`,
        '≤ 300 MB',
        verdict(results.firstIndex.peakRssMB <= 300),
      ],
      [
        'query p50 / p99 (all kinds)',
        `${all.p50.toFixed(1)} / ${all.p99.toFixed(1)} ms`,
        '≤ 20 / 150 ms',
        verdict(all.p50 <= 20 && all.p99 <= 150),
      ],
      [
        'query p50 against rg -F p50',
        `${all.rgP50.toFixed(0)} ms, ${(all.rgP50 / all.p50).toFixed(0)}x faster`,
        '≥ 5x',
        verdict(all.rgP50 / all.p50 >= 5),
      ],
      [
        'index on disk',
        `${results.index.MB.toFixed(0)} MB, ${(results.index.ofTranscripts * 100).toFixed(0)}% of the transcripts`,
        '≤ 35%',
        verdict(results.index.ofTranscripts <= 0.35),
      ],
      [
        'restart: listening, then a search answering with hits',
        `${upMs.toFixed(0)} ms, then ${restartMs.toFixed(0)} ms`,
        'search ≤ 1,000 ms',
        verdict(restartMs <= 1000),
      ],
      [
        'appended message found',
        `${appendFoundMs.toFixed(0)} ms`,
        '≤ 5,000 ms',
        verdict(appendFoundMs <= 5000),
      ],
    ];
    writeFileSync(outFile, `${JSON.stringify({ ...results, verdicts: rows }, null, 2)}\n`);
    process.stdout.write(
      `\nSearch over ${transcriptMB.toFixed(0)} MB of transcripts (load ${results.loadAverage})\n`,
    );
    for (const [name, value, target, ok] of rows)
      process.stdout.write(`${ok}  ${name}: ${value} (target ${target})\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
