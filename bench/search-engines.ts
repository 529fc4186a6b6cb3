import { execFileSync, fork, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../src-main/seeded-random.js';

/**
 * `node ./bin/run-ts.js bench/search-engines.ts`: the full-text engines a transcript index
 * could use, measured side by side on the same Claude-Code-shaped JSONL transcripts:
 * SQLite FTS5 through `node:sqlite`, SQLite FTS5 through better-sqlite3, and MiniSearch
 * (pure JavaScript), with `rg -F` over the same files as the brute-force floor. Each engine
 * runs in a process of its own so its peak RSS is its own. better-sqlite3 and MiniSearch are
 * not project dependencies: they are installed into SEARCH_BENCH_DEPS (default under the
 * temporary folder) on first use. SEARCH_BENCH_MB sets the corpus size (default 200 MB).
 */

const MB = 1024 * 1024;
const here = fileURLToPath(new URL('.', import.meta.url));
const depsDir = process.env.SEARCH_BENCH_DEPS ?? join(tmpdir(), 'sessiondesk-search-bench-deps');
const corpusMB = Number(process.env.SEARCH_BENCH_MB ?? '200');
const outFile = process.env.SEARCH_BENCH_OUT ?? join(here, 'search-engines-results.json');

/**
 * `-column` and `-none` are FTS5's `detail` option: positions kept per column or not at all
 * (smaller; a phrase is then all its words, checked against the transcript text).
 */
type Engine = 'node-sqlite' | 'node-sqlite-column' | 'node-sqlite-none' | 'better-sqlite3' | 'minisearch';
const ALL_ENGINES: Engine[] = [
  'node-sqlite',
  'node-sqlite-column',
  'node-sqlite-none',
  'better-sqlite3',
  'minisearch',
];
/** MiniSearch holds its whole index in memory (over 500 MB of RSS for 20 MB): it runs only on small corpora. */
const ENGINES =
  (process.env.SEARCH_BENCH_ENGINES?.split(',') as Engine[] | undefined) ??
  ALL_ENGINES.filter((e) => e !== 'minisearch' || corpusMB <= 20);

interface QuerySet {
  rare: string[];
  common: string[];
  prefix: string[];
  phrase: string[];
}

interface EngineResult {
  engine: Engine;
  messages: number;
  indexMs: number;
  indexBytes: number;
  peakRssMB: number;
  /** ms per query kind: p50 and p99 over every query of that kind, each run 5 times. */
  queries: Record<keyof QuerySet, { p50: number; p99: number; hits: number }>;
  openMs: number;
}

// ---------- the corpus ----------

/** A Zipf-like vocabulary: common English and code words first, then identifiers, then rare ones. */
function vocabulary(random: () => number): { words: string[]; rare: string[] } {
  const base = (
    'the a to of and in is it that for this with we on be as file function return const value ' +
    'error test import export from type string number if else await async let new class data ' +
    'request response session user message server client cache index query store config path ' +
    'build run check update read write list page cursor token state render component module'
  ).split(' ');
  const syllables = 'ka lo mi ne ru ta vo pe si da go li mu ze ba fi no ra te yo'.split(' ');
  const word = () => {
    let w = '';
    const n = 2 + Math.floor(random() * 3);
    for (let i = 0; i < n; i += 1) w += syllables[Math.floor(random() * syllables.length)];
    return w;
  };
  const words = [...base];
  for (let i = 0; i < 20_000; i += 1)
    words.push(random() < 0.3 ? `${word()}${word()[0]!.toUpperCase()}${word()}` : word());
  const rare: string[] = [];
  for (let i = 0; i < 200_000; i += 1) rare.push(`${word()}q${i.toString(36)}`);
  return { words, rare };
}

interface Corpus {
  dir: string;
  bytes: number;
  files: number;
  queries: QuerySet;
}

async function makeCorpus(dir: string, targetBytes: number): Promise<Corpus> {
  const random = seededRandom(0x5ea4c4);
  const { words, rare } = vocabulary(random);
  // Zipf sampling through a cumulative table.
  const weights = words.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  const pickWord = () => {
    const r = random();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  // 256 chunks of 64 KB text, sliced at random offsets: files read over and over, as agents do.
  const chunks = Array.from({ length: 256 }, () => {
    const parts: string[] = [];
    let length = 0;
    let line: string[] = [];
    while (length < 64 * 1024) {
      const w = pickWord();
      line.push(w);
      length += w.length + 1;
      if (line.length > 4 + random() * 10) {
        parts.push(line.join(' '));
        line = [];
      }
    }
    return parts.join('\n');
  });
  const usedRare = new Set<string>();
  const phrases: string[] = [];
  const text = (length: number) => {
    const chunk = chunks[Math.floor(random() * chunks.length)]!;
    const start = Math.floor(random() * Math.max(1, chunk.length - length));
    let t = chunk.slice(start, start + length);
    while (t.length < length) t += `\n${chunk.slice(0, length - t.length)}`;
    // A few words no other message shares: names, ids, a stack trace's symbol.
    const extra: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const r = rare[Math.floor(random() * rare.length)]!;
      usedRare.add(r);
      extra.push(r);
    }
    if (phrases.length < 400 && random() < 0.05) {
      const m = /\b([a-z]{3,}) ([a-z]{3,})\b/.exec(t.slice(Math.floor(t.length / 2)));
      if (m) phrases.push(`${m[1]} ${m[2]}`);
    }
    return `${t} ${extra.join(' ')}`;
  };
  mkdirSync(dir, { recursive: true });
  let bytes = 0;
  let files = 0;
  let counter = 0;
  while (bytes < targetBytes) {
    const sessionId = `s${files.toString().padStart(6, '0')}`;
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const size = Math.max(8_000, Math.min(8 * MB, 300 * 1024 * Math.exp(1.2 * normal)));
    const fd = openSync(join(dir, `${sessionId}.jsonl`), 'w');
    let written = 0;
    const line = (type: 'user' | 'assistant', content: unknown[]) => {
      counter += 1;
      const record = {
        parentUuid: null,
        isSidechain: false,
        userType: 'external',
        cwd: '/home/ada/work/web-app',
        sessionId,
        version: '2.1.330',
        type,
        message: { role: type, ...(type === 'assistant' ? { model: 'claude-opus-4-6' } : {}), content },
        uuid: `u${counter}`,
        timestamp: new Date(1_760_000_000_000 + counter * 7000).toISOString(),
      };
      const out = `${JSON.stringify(record)}\n`;
      writeSync(fd, out);
      written += Buffer.byteLength(out);
    };
    line('user', [{ type: 'text', text: text(300) }]);
    while (written < size) {
      const roll = random();
      const id = `toolu_${counter.toString(36)}`;
      if (roll < 0.15) line('assistant', [{ type: 'thinking', thinking: text(500 + random() * 2500) }]);
      else if (roll < 0.35) line('assistant', [{ type: 'text', text: text(200 + random() * 1300) }]);
      else if (roll < 0.6)
        line('assistant', [
          {
            type: 'tool_use',
            id,
            name: 'Edit',
            input: { file_path: `src/f${counter}.ts`, old_string: text(300), new_string: text(300) },
          },
        ]);
      else {
        const n = random() < 0.01 ? 200_000 + random() * 1_800_000 : 2_000 + random() * 58_000;
        line('user', [{ type: 'tool_result', tool_use_id: id, content: text(n) }]);
      }
    }
    closeSync(fd);
    bytes += written;
    files += 1;
  }
  const rareList = [...usedRare];
  const pick = <T>(items: T[], n: number) =>
    Array.from({ length: n }, (_, i) => items[(i * 7919) % items.length]!);
  const prefixSource = words.slice(200, 5000).filter((w) => w.length >= 6);
  return {
    dir,
    bytes,
    files,
    queries: {
      rare: pick(rareList, 40),
      common: pick(
        words.slice(0, 60).filter((w) => w.length > 3),
        40,
      ),
      prefix: pick(prefixSource, 40).map((w) => `${w.slice(0, 4)}*`),
      phrase: pick(phrases, 40).map((p) => `"${p}"`),
    },
  };
}

// ---------- reading transcripts the way an index would ----------

/** The searchable text of one Claude Code line: prompts, answers, thinking, tool inputs and outputs. */
function searchableText(record: unknown): string {
  const out: string[] = [];
  const walk = (value: unknown, key: string) => {
    if (typeof value === 'string') {
      if (key !== 'type' && key !== 'id' && key !== 'tool_use_id' && key !== 'signature') out.push(value);
    } else if (Array.isArray(value)) for (const v of value) walk(v, key);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  const message = (record as { message?: { content?: unknown } }).message;
  walk(message?.content, 'content');
  return out.join('\n');
}

async function* messages(
  dir: string,
): AsyncGenerator<{ file: number; offset: number; length: number; text: string }> {
  const names = readdirSync(dir).sort();
  for (const [file, name] of names.entries()) {
    const bytes = await readFile(join(dir, name));
    let offset = 0;
    while (offset < bytes.length) {
      let end = bytes.indexOf(0x0a, offset);
      if (end < 0) end = bytes.length;
      const json = bytes.toString('utf8', offset, end);
      yield { file, offset, length: end - offset, text: searchableText(JSON.parse(json)) };
      offset = end + 1;
    }
  }
}

// ---------- engines ----------

/** The part of MiniSearch's API used here (it is not a project dependency, so no types). */
interface MiniSearchIndex {
  add(doc: { id: number; text: string }): void;
  search(q: string, options: { prefix: boolean; combineWith: 'AND' | 'OR' }): unknown[];
  toJSON(): unknown;
}
interface MiniSearchClass {
  new (options: { fields: string[]; storeFields: string[] }): MiniSearchIndex;
  loadJSON(json: string, options: { fields: string[] }): MiniSearchIndex;
}

interface SqliteLike {
  exec(sql: string): void;
  prepare(sql: string): { run(...args: unknown[]): unknown; all(...args: unknown[]): unknown[] };
  close(): void;
}

function openSqlite(engine: Exclude<Engine, 'minisearch'>, path: string): SqliteLike {
  if (engine !== 'better-sqlite3') {
    const require = createRequire(import.meta.url);
    const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string) => SqliteLike };
    return new DatabaseSync(path);
  }
  const require = createRequire(join(depsDir, 'package.json'));
  const Database = require('better-sqlite3') as new (path: string) => SqliteLike;
  return new Database(path);
}

/** User words to a safe FTS5 expression: every term quoted, a trailing * kept as a prefix. */
function ftsQuery(q: string): string {
  if (q.startsWith('"')) return q;
  return q
    .split(/\s+/)
    .filter(Boolean)
    .map((t) => (t.endsWith('*') ? `"${t.slice(0, -1).replace(/"/g, '""')}"*` : `"${t.replace(/"/g, '""')}"`))
    .join(' ');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

async function runEngine(engine: Engine, corpus: Corpus, workDir: string): Promise<EngineResult> {
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  let count = 0;
  let indexBytes: number;
  let search: (q: string) => number;
  let reopen: () => void;
  if (engine === 'minisearch') {
    const require = createRequire(join(depsDir, 'package.json'));
    const MiniSearch = require('minisearch') as MiniSearchClass;
    let index = new MiniSearch({ fields: ['text'], storeFields: [] });
    for await (const m of messages(corpus.dir)) {
      index.add({ id: count, text: m.text });
      count += 1;
    }
    const json = JSON.stringify(index);
    indexBytes = Buffer.byteLength(json);
    const path = join(workDir, 'minisearch.json');
    await writeFile(path, json);
    search = (q) => {
      const phrase = q.startsWith('"');
      const terms = q.replace(/"/g, '');
      const prefix = terms.endsWith('*');
      // MiniSearch has no phrases: all the words must match; a phrase check would read the text.
      return index
        .search(prefix ? terms.slice(0, -1) : terms, { prefix, combineWith: phrase ? 'AND' : 'OR' })
        .slice(0, 20).length;
    };
    reopen = () => {
      index = MiniSearch.loadJSON(json, { fields: ['text'] });
    };
  } else {
    const path = join(workDir, `${engine}.db`);
    const db = openSqlite(engine, path);
    db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL');
    // Contentless: the transcripts hold the text; the index keeps only where each message is.
    const detail = engine.endsWith('-column') ? 'column' : engine.endsWith('-none') ? 'none' : 'full';
    db.exec(`CREATE VIRTUAL TABLE fts USING fts5(body, content='', contentless_delete=1, detail=${detail})`);
    db.exec('CREATE TABLE place(id INTEGER PRIMARY KEY, file INTEGER, offset INTEGER, length INTEGER)');
    const insertText = db.prepare('INSERT INTO fts(rowid, body) VALUES (?, ?)');
    const insertPlace = db.prepare('INSERT INTO place(id, file, offset, length) VALUES (?, ?, ?, ?)');
    db.exec('BEGIN');
    let batchBytes = 0;
    for await (const m of messages(corpus.dir)) {
      insertText.run(count, m.text);
      insertPlace.run(count, m.file, m.offset, m.length);
      count += 1;
      batchBytes += m.length;
      if (batchBytes > 8 * MB) {
        db.exec('COMMIT; BEGIN');
        batchBytes = 0;
      }
    }
    db.exec('COMMIT');
    db.exec("INSERT INTO fts(fts) VALUES ('optimize')");
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    indexBytes = statSync(path).size;
    let open = openSqlite(engine, path);
    let query = open.prepare(
      'SELECT p.file, p.offset, p.length FROM fts JOIN place p ON p.id = fts.rowid WHERE fts MATCH ? ORDER BY rank LIMIT 20',
    );
    // Without positions a phrase is asked as its words; the caller checks the text.
    search = (q) => query.all(detail === 'full' ? ftsQuery(q) : ftsQuery(q.replace(/"/g, ''))).length;
    reopen = () => {
      open.close();
      open = openSqlite(engine, path);
      query = open.prepare(
        'SELECT p.file, p.offset, p.length FROM fts JOIN place p ON p.id = fts.rowid WHERE fts MATCH ? ORDER BY rank LIMIT 20',
      );
    };
  }
  const indexMs = performance.now() - started;
  const openStarted = performance.now();
  reopen();
  search(corpus.queries.rare[0]!);
  const openMs = performance.now() - openStarted;
  const queries = {} as EngineResult['queries'];
  for (const kind of Object.keys(corpus.queries) as Array<keyof QuerySet>) {
    const times: number[] = [];
    let hits = 0;
    for (let round = 0; round < 5; round += 1) {
      for (const q of corpus.queries[kind]) {
        const t = performance.now();
        hits += search(q);
        times.push(performance.now() - t);
      }
    }
    times.sort((a, b) => a - b);
    queries[kind] = { p50: percentile(times, 50), p99: percentile(times, 99), hits: hits / 5 };
  }
  clearInterval(sample);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { engine, messages: count, indexMs, indexBytes, peakRssMB: peak / MB, queries, openMs };
}

function ripgrep(corpus: Corpus): Record<keyof QuerySet, { p50: number; p99: number }> {
  const out = {} as Record<keyof QuerySet, { p50: number; p99: number }>;
  // Warm the page cache first.
  spawnSync('rg', ['-F', '-l', '--', 'warm-up-never-found', corpus.dir]);
  for (const kind of Object.keys(corpus.queries) as Array<keyof QuerySet>) {
    const times: number[] = [];
    for (const q of corpus.queries[kind].slice(0, 10)) {
      // rg -F has no prefix or word rules: a prefix is its stem, a phrase its words as written.
      const needle = q.replace(/"/g, '').replace(/\*$/, '');
      const t = performance.now();
      spawnSync('rg', ['-F', '-i', '-l', '--', needle, corpus.dir]);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    out[kind] = { p50: percentile(times, 50), p99: percentile(times, 99) };
  }
  return out;
}

function ensureDeps(): void {
  if (
    existsSync(join(depsDir, 'node_modules', 'better-sqlite3')) &&
    existsSync(join(depsDir, 'node_modules', 'minisearch'))
  )
    return;
  mkdirSync(depsDir, { recursive: true });
  process.stderr.write(`installing better-sqlite3 and minisearch into ${depsDir}\n`);
  // better-sqlite3 builds from source against the running Node's headers when no prebuilt fits.
  execFileSync('npm', ['install', '--no-save', '--prefix', depsDir, 'better-sqlite3@13', 'minisearch@7'], {
    stdio: 'inherit',
    env: { ...process.env, npm_config_nodedir: join(process.execPath, '..', '..') },
  });
}

async function main(): Promise<void> {
  const [role, engine, corpusJson, workDir] = process.argv.slice(2);
  if (role === 'engine') {
    const corpus = JSON.parse(corpusJson!) as Corpus;
    const result = await runEngine(engine as Engine, corpus, workDir!);
    process.send!(result);
    return;
  }
  ensureDeps();
  const root = join(tmpdir(), `sessiondesk-search-bench-${process.pid}`);
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const load = () => execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ');
    process.stderr.write(`writing a ${corpusMB} MB corpus (load ${load()})\n`);
    const corpus = await makeCorpus(join(root, 'corpus'), corpusMB * MB);
    process.stderr.write(`${corpus.files} files, ${(corpus.bytes / MB).toFixed(0)} MB\n`);
    const results: EngineResult[] = [];
    for (const name of ENGINES) {
      const workDir = join(root, name);
      mkdirSync(workDir);
      const runTs = join(here, '..', 'bin', 'run-ts.js');
      const child = fork(runTs, [
        fileURLToPath(import.meta.url),
        'engine',
        name,
        JSON.stringify(corpus),
        workDir,
      ]);
      const result = await new Promise<EngineResult>((resolve, reject) => {
        child.once('message', (m) => resolve(m as EngineResult));
        child.once('exit', (code) => code !== 0 && reject(new Error(`${name} exited with ${code}`)));
      });
      process.stderr.write(`${name}: ${JSON.stringify(result)} (load ${load()})\n`);
      results.push(result);
    }
    const rg = ripgrep(corpus);
    const summary = {
      at: new Date().toISOString(),
      node: process.version,
      corpusMB: corpus.bytes / MB,
      files: corpus.files,
      load: load(),
      engines: results.map((r) => ({
        ...r,
        indexPercentOfTranscripts: (100 * r.indexBytes) / corpus.bytes,
        transcriptMBPerSecond: corpus.bytes / MB / (r.indexMs / 1000),
      })),
      ripgrep: rg,
    };
    await writeFile(outFile, `${JSON.stringify(summary, null, 2)}\n`);
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    const lines = [
      row([
        'engine',
        'index s',
        'MB/s',
        'index % of transcripts',
        'peak RSS MB',
        'open ms',
        'rare p50/p99',
        'common p50/p99',
        'prefix p50/p99',
        'phrase p50/p99',
      ]),
      ...summary.engines.map((r) =>
        row([
          r.engine,
          (r.indexMs / 1000).toFixed(1),
          r.transcriptMBPerSecond.toFixed(1),
          `${r.indexPercentOfTranscripts.toFixed(1)}%`,
          r.peakRssMB.toFixed(0),
          r.openMs.toFixed(1),
          ...(['rare', 'common', 'prefix', 'phrase'] as const).map(
            (k) => `${r.queries[k].p50.toFixed(2)} / ${r.queries[k].p99.toFixed(2)}`,
          ),
        ]),
      ),
      row([
        'rg -F -i -l',
        '–',
        '–',
        '–',
        '–',
        '–',
        ...(['rare', 'common', 'prefix', 'phrase'] as const).map(
          (k) => `${rg[k].p50.toFixed(1)} / ${rg[k].p99.toFixed(1)}`,
        ),
      ]),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    cleanup();
  }
}

void main();
