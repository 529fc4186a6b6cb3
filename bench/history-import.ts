import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { Store } from '../src-main/store/store.js';
import { buildBenchServer, get, startChild } from './bench-child.js';
import { MARKER, writeCorpus, type Line } from './claude-history-corpus.js';
import { percentile } from './load.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

/**
 * `npm run bench:history`: importing and following a heavy user's Claude Code history, the
 * CLI's own files as Claude Code 2.1.330 writes them. Writes HISTORY_BENCH_MB of session files
 * (default 300; 3072 for the 3 GB proof) under a `~/.claude/projects` of its own, each line
 * made from the recorded session in test/fixtures/history (the same record types, fields and
 * order: the prompt and its snapshots, API request shapes and blobs, assistant turns, tool
 * results whose output is also kept in `toolUseResult` and in the request blob), with tool
 * output cut from the real source files in node_modules. Then, side by side in one run:
 *
 * 1. `sessiondesk history import` with no server (wall time, peak RSS of the process), and the
 *    same command again with nothing changed;
 * 2. a server (bench/scale-server.ts, as `serve` runs) that is given the folder as a history
 *    source through the API and imports and indexes it in the background, while the list is
 *    read one request at a time: until the last session's last words are found by search, the
 *    list's latency, the longest event-loop stall and the server's peak RSS;
 * 3. a line appended to a session file, until the API has the message.
 *
 * Results go to bench/history-results.json and stdout.
 */

const MB = 1024 * 1024;
const targetMB = Number(process.env.HISTORY_BENCH_MB ?? 300);
if (!Number.isFinite(targetMB) || targetMB <= 0)
  throw new Error('HISTORY_BENCH_MB must be a positive number');
const outFile = process.env.HISTORY_OUT ?? fileURLToPath(new URL('./history-results.json', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'sessiondesk.js');
const startedAt = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);

const APPENDED_MARKER = 'zqhistoryappendedmarker';

interface Seeded {
  organizationId: string;
  email: string;
  password: string;
  apiKey: string;
}

async function seedWorkspace(dataDir: string): Promise<Seeded> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    const email = 'ada@bench.test';
    const password = 'bench password, not secret';
    await accounts.createUser({ email, name: 'Ada', password });
    const workspace = await accounts.createWorkspace({ name: 'History', ownerEmail: email });
    const key = await accounts.createKey({ organizationId: workspace.organizationId, label: 'bench' });
    return { organizationId: workspace.organizationId, email, password, apiKey: key.key };
  } finally {
    await store.close();
  }
}

/** `sessiondesk history import` with no server, under GNU time: its output, wall time and peak RSS. */
function importCommand(dataDir: string, seeded: Seeded, root: string) {
  const run = spawnSync(
    '/usr/bin/time',
    [
      '-f',
      'time-report %e %M',
      process.execPath,
      CLI,
      'history',
      'import',
      '--workspace',
      seeded.organizationId,
      '--claude-dir',
      root,
      '--data-dir',
      dataDir,
    ],
    {
      encoding: 'utf8',
      maxBuffer: 64 * MB,
      // HISTORY_COMMAND_NODE_OPTIONS (say --max-old-space-size=64) tells what the command needs
      // from what V8 merely keeps.
      env: { ...process.env, NODE_OPTIONS: process.env.HISTORY_COMMAND_NODE_OPTIONS ?? '' },
    },
  );
  if (run.status !== 0) throw new Error(`history import failed (${run.status}): ${run.stderr}`);
  const report = /time-report ([\d.]+) (\d+)/u.exec(run.stderr);
  if (!report) throw new Error(`no time report in: ${run.stderr}`);
  return { output: run.stdout.trim(), seconds: Number(report[1]), peakRssMB: Number(report[2]) / 1024 };
}

async function signIn(url: string, seeded: Seeded): Promise<string> {
  const response = await fetch(`${url}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ email: seeded.email, password: seeded.password }),
  });
  if (response.status !== 200) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
  return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'sessiondesk-history-bench-'));
  // A failed run leaves no server behind.
  let stopServer = () => {};
  try {
    const root = join(work, 'claude');
    progress(`writing about ${targetMB} MB of Claude Code session files into ${root}`);
    const corpus = writeCorpus(root, targetMB, progress);
    const corpusMB = corpus.bytes / MB;
    progress(
      `wrote ${corpusMB.toFixed(0)} MB in ${corpus.sessions} sessions, ${(corpus.writeMs / 1000).toFixed(1)} s`,
    );
    execFileSync('sync');

    // 1. The command, with no server; then again, with nothing changed.
    const commandDir = join(work, 'data-command');
    const seededCommand = await seedWorkspace(commandDir);
    const first = importCommand(commandDir, seededCommand, root);
    progress(`command: ${first.output} in ${first.seconds} s, peak RSS ${first.peakRssMB.toFixed(0)} MB`);
    const again = importCommand(commandDir, seededCommand, root);
    progress(`command again: ${again.output} in ${again.seconds} s`);

    // 2. A server given the folder as a source: import and index in the background.
    const serverDir = join(work, 'data-server');
    const seeded = await seedWorkspace(serverDir);
    const serverScript = await buildBenchServer();
    const server = await startChild(serverScript, serverDir);
    stopServer = () => server.child.kill('SIGKILL');
    const cookie = await signIn(server.url, seeded);
    await server.ask({ cmd: 'phase', name: 'start' });
    const headers = { 'x-api-key': seeded.apiKey };
    const loadBefore = loadavg()[0] ?? 0;
    const added = await fetch(`${server.url}/api/workspaces/${seeded.organizationId}/history-sources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, origin: server.url },
      body: JSON.stringify({ kind: 'claude-code', rootDir: root }),
    });
    if (added.status !== 201) throw new Error(`adding the source: ${added.status} ${await added.text()}`);
    const importStarted = performance.now();
    const listMs: number[] = [];
    let importedMs = 0;
    let foundMs = 0;
    for (let i = 0; ; i += 1) {
      listMs.push((await get(`${server.url}/api/sessions?limit=50`, headers)).ms);
      if (i % 10 === 0) {
        if (importedMs === 0) {
          const sources = await get(`${server.url}/api/workspaces/${seeded.organizationId}/history-sources`, {
            cookie,
          });
          const [source] = (JSON.parse(sources.body) as { sources: Array<{ sessions: number }> }).sources;
          if (source && source.sessions >= corpus.sessions) importedMs = performance.now() - importStarted;
        }
        const found = await get(`${server.url}/api/search?q=${MARKER}&limit=100`, headers);
        if (
          found.status === 200 &&
          (JSON.parse(found.body) as { hits: unknown[] }).hits.length >= corpus.markers
        ) {
          foundMs = performance.now() - importStarted;
          if (importedMs === 0) importedMs = foundMs;
          break;
        }
        if (performance.now() - importStarted > 30 * 60_000)
          throw new Error('the import took over 30 minutes');
        if (i % 500 === 0)
          progress(`  importing… ${((performance.now() - importStarted) / 1000).toFixed(0)} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const importPhase = await server.ask({ cmd: 'phase', name: 'import' });
    listMs.sort((a, b) => a - b);
    progress(
      `server: imported in ${(importedMs / 1000).toFixed(1)} s, searchable in ${(foundMs / 1000).toFixed(1)} s; list p99 ${percentile(listMs, 99).toFixed(1)} ms`,
    );

    // 3. A line appended to a session file, until the API has it.
    const line = JSON.parse(
      readFileSync(corpus.lastFile, 'utf8')
        .trim()
        .split('\n')
        .find((l) => l.includes('"type":"assistant"'))!,
    ) as Line;
    const appended = {
      ...line,
      uuid: randomUUID(),
      timestamp: new Date().toISOString(),
      message: {
        ...(line.message as object),
        id: `msg_${randomUUID()}`,
        content: [{ type: 'text', text: `One more thing. ${APPENDED_MARKER}` }],
      },
    };
    // The newest session is the last file's: its messages in the API, then in search.
    const newest = (
      JSON.parse((await get(`${server.url}/api/sessions?limit=1`, headers)).body) as {
        sessions: Array<{ id: string }>;
      }
    ).sessions[0];
    if (!newest) throw new Error('no sessions listed');
    const messageCount = async () =>
      (
        JSON.parse((await get(`${server.url}/api/sessions/${newest.id}`, headers)).body) as {
          session: { messages: unknown[] };
        }
      ).session.messages.length;
    const before = await messageCount();
    const appendStarted = performance.now();
    appendFileSync(corpus.lastFile, `${JSON.stringify(appended)}\n`);
    let inApiMs = 0;
    while (inApiMs === 0) {
      if ((await messageCount()) > before) inApiMs = performance.now() - appendStarted;
      else if (performance.now() - appendStarted > 60_000)
        throw new Error('the appended line was not in the API in 60 s');
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    progress(`appended line in the API in ${inApiMs.toFixed(0)} ms`);
    let appendMs = 0;
    for (;;) {
      const found = await get(`${server.url}/api/search?q=${APPENDED_MARKER}&limit=5`, headers);
      if (found.status === 200 && (JSON.parse(found.body) as { hits: unknown[] }).hits.length > 0) {
        appendMs = performance.now() - appendStarted;
        break;
      }
      if (performance.now() - appendStarted > 60_000)
        throw new Error('the appended line was not found in 60 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    progress(`appended line found by search in ${appendMs.toFixed(0)} ms`);
    await server.ask({ cmd: 'stop' });

    const storeBytes = (dir: string): number =>
      readdirSync(dir).reduce((sum: number, name): number => {
        const path = join(dir, name);
        const stat = statSync(path);
        return sum + (stat.isDirectory() ? storeBytes(path) : stat.size);
      }, 0);
    const results = {
      at: new Date().toISOString(),
      node: process.version,
      loadAverageAtServerStart: loadBefore,
      corpus: { mb: corpusMB, sessions: corpus.sessions, writeSeconds: corpus.writeMs / 1000 },
      command: {
        output: first.output,
        seconds: first.seconds,
        peakRssMB: first.peakRssMB,
        againSeconds: again.seconds,
        againOutput: again.output,
        dataDirMB: storeBytes(commandDir) / MB,
      },
      server: {
        importedSeconds: importedMs / 1000,
        searchableSeconds: foundMs / 1000,
        listP50Ms: percentile(listMs, 50),
        listP99Ms: percentile(listMs, 99),
        listRequests: listMs.length,
        maxStallMs: importPhase.maxStallMs,
        // The import's own peak; and since the start, the sign-in's scrypt (128 MiB) included.
        importPeakRssMB: importPhase.phasePeakRssMB,
        peakRssMB: importPhase.peakRssMB,
        appendedInApiMs: inApiMs,
        appendedFoundMs: appendMs,
      },
    };
    writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
    const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
    const importTargetSeconds = (180 * corpusMB) / 3072;
    const lines = [
      `Importing ${corpusMB.toFixed(0)} MB of Claude Code history (${corpus.sessions} sessions):`,
      `${verdict(first.peakRssMB <= 300)}  command: ${first.seconds} s, peak RSS ${first.peakRssMB.toFixed(0)} MB (target ≤ 300 MB); again, unchanged: ${again.seconds} s`,
      `${verdict(foundMs / 1000 <= importTargetSeconds)}  server: imported ${(importedMs / 1000).toFixed(1)} s, searchable ${(foundMs / 1000).toFixed(1)} s (target ≤ ${importTargetSeconds.toFixed(0)} s: 180 s per 3 GB)`,
      `${verdict(percentile(listMs, 99) <= 50)}  list while importing: p50 ${percentile(listMs, 50).toFixed(1)} ms, p99 ${percentile(listMs, 99).toFixed(1)} ms (target p99 ≤ 50 ms)`,
      `${verdict(Number(importPhase.maxStallMs) <= 50)}  longest event-loop stall: ${Number(importPhase.maxStallMs).toFixed(0)} ms (target ≤ 50 ms)`,
      `${verdict(Number(importPhase.phasePeakRssMB) <= 300)}  server peak RSS while importing: ${Number(importPhase.phasePeakRssMB).toFixed(0)} MB (target ≤ 300 MB); since its start, a sign-in's scrypt included: ${Number(importPhase.peakRssMB).toFixed(0)} MB`,
      `${verdict(inApiMs <= 5_000)}  appended line in the API: ${inApiMs.toFixed(0)} ms (target ≤ 5,000 ms)`,
      `${verdict(appendMs <= 5_000)}  appended line found by search: ${appendMs.toFixed(0)} ms (target ≤ 5,000 ms)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    stopServer();
    if (process.env.HISTORY_KEEP) progress(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
