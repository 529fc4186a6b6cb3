// One search hit's message read from the transcript where its frame starts: the frame read by its
// own length (`Transcripts.readFrame`, what a hit reads now) beside the chunked reader it used
// before (`readPayloads`, 256 KiB at a time), side by side in one process, on a copy of a data
// directory of your own (the first 40 messages of up to 120 sessions):
//
//   HIT_READ_DATA=DIR node ./bin/run-ts.js bench/hit-read.ts
import { readsOf } from '../src-main/store/sqljs-storage.js';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { Store } from '../src-main/store/store.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { readMessagePage } from '../src-main/sessions/transcript-reads.js';
const from = process.env.HIT_READ_DATA;
if (!from) {
  console.error('Usage: HIT_READ_DATA=DIR node ./bin/run-ts.js bench/hit-read.ts');
  process.exit(2);
}
const copy = mkdtempSync(join(tmpdir(), 'hit-read-'));
cpSync(from, copy, { recursive: true });
const store = await Store.open({ dataDir: copy, clock: systemClock, logger: silentLogger });
const repos = createRepositories(store.db);
const src = readsOf(store);
const rows = store.db.all('SELECT id FROM sessions').map((r) => repos.sessions.find(String(r[0]))!);
const targets: { row: (typeof rows)[number]; offset: number }[] = [];
for (const row of rows.slice(0, 120)) {
  const page = await readMessagePage(src, row, 0, 40, Infinity);
  for (const offset of page.offsets) targets.push({ row, offset });
}
const old = async (row: (typeof rows)[number], offset: number) => {
  const pieces: Buffer[] = [];
  for await (const piece of store.transcripts.readPayloads(row.id, offset, row.transcriptBytes)) {
    if (piece.index > 0) break;
    pieces.push(piece.bytes);
    if (piece.end) break;
  }
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
};
const now = (row: (typeof rows)[number], offset: number) =>
  store.transcripts.readFrame(row.id, offset, row.transcriptBytes);
for (const t of targets)
  if (!(await old(t.row, t.offset)).equals(await now(t.row, t.offset)))
    throw new Error(`the two reads differ at ${t.row.id} byte ${t.offset}`);
const sizes = await Promise.all(targets.map((t) => now(t.row, t.offset).then((b) => b.length)));
sizes.sort((a, b) => a - b);
console.log(
  targets.length,
  'messages; payload p50',
  sizes[sizes.length >> 1],
  'p90',
  sizes[Math.floor(sizes.length * 0.9)],
);
const cpu: Record<string, number[]> = { before: [], after: [] };
for (let round = 0; round < 10; round++) {
  for (const [name, fn] of [
    ['before', old],
    ['after', now],
  ] as const) {
    const c = process.cpuUsage();
    for (const x of targets) await fn(x.row, x.offset);
    const u = process.cpuUsage(c);
    cpu[name]!.push((u.user + u.system) / targets.length);
  }
}
const median = (v: number[]) => v.slice().sort((a, b) => a - b)[v.length >> 1]!;
console.log(
  `CPU per read, median of 10 rounds: readPayloads (before) ${median(cpu.before!).toFixed(0)} us, readFrame (after) ${median(cpu.after!).toFixed(0)} us; ratio ${(median(cpu.after!) / median(cpu.before!)).toFixed(2)}`,
);
await store.close({ snapshot: false });
rmSync(copy, { recursive: true, force: true });
