import type { LoadResult, ProbeResult } from './load.js';

/** The results file's shape, and the table printed from it. */

export interface ScenarioResult {
  key: string;
  label: string;
  load: LoadResult;
  /** Single-request latency on an idle server, measured just before the load. */
  idle: ProbeResult;
  vsBare: number;
}

export interface TargetResult {
  name: string;
  target: string;
  measured: string;
  pass: boolean;
  note?: string;
}

export interface DatasetResult {
  sessions: number;
  messagesPerSession: number;
  messages: number;
  messageJsonMB: number;
  databaseMB: number;
  seedSeconds: number;
}

export interface BenchResults {
  date: string;
  command: string;
  machine: {
    nproc: number;
    cpu: string;
    memoryGB: number;
    node: string;
    platform: string;
    /** One-minute load average: other work on the machine skews every figure. */
    loadAverage: { before: number; after: number };
  };
  source: { commit: string; changedFiles: string[] };
  options: Record<string, number>;
  datasets: { small: DatasetResult; large: DatasetResult };
  startup: {
    snapshotOnly: { runsMs: number[]; medianMs: number };
    withJournal: {
      journalMB: number;
      /** What the journal held before the title updates: the header only, when all is well. */
      journalBytesBeforeFill: number;
      records: number;
      fillSeconds: number;
      runsMs: number[];
      medianMs: number;
    };
    largeDatabaseMs: number;
  };
  snapshot: { databaseMB: number; exportMs: number; totalMs: number };
  http: ScenarioResult[];
  memory: {
    peakRssMB: number;
    peakRssByPhaseMB: Record<string, number>;
    /** Peak RSS over the phases in which that data set was loaded, against its size. */
    small: { peakRssMB: number; databaseMB: number; ratio: number };
    large: { peakRssMB: number; databaseMB: number; ratio: number };
  };
  /** makePreview of one message's text, by text length in characters. */
  previewMs: Record<string, number>;
  targets: TargetResult[];
  problems: string[];
  ok: boolean;
}

export const MB = 1_000_000;

export const round = (value: number, digits = 1): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const int = (value: number) => Math.round(value).toLocaleString('en-US');

function table(header: string[], rows: string[][], rightAligned: (i: number) => boolean): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (rightAligned(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function formatResults(r: BenchResults): string {
  const out: string[] = [];
  const { small, large } = r.datasets;
  out.push(
    `Session Desk benchmark, ${r.date}`,
    `machine: ${r.machine.nproc} CPUs (${r.machine.cpu}), ${r.machine.memoryGB} GB RAM, Node ${r.machine.node}, ${r.machine.platform}`,
    `load average (1 min): ${r.machine.loadAverage.before} before, ${r.machine.loadAverage.after} after; ` +
      `source: ${r.source.commit}${r.source.changedFiles.length > 0 ? ` + uncommitted changes in ${r.source.changedFiles.join(', ')}` : ''}`,
    `options: ${Object.entries(r.options)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
    '',
    'Data (MB = 1,000,000 bytes)',
  );
  for (const d of [small, large]) {
    out.push(
      `  ${int(d.sessions)} sessions x ${d.messagesPerSession} messages: ${int(d.messages)} messages, ` +
        `${d.messageJsonMB} MB of message JSON, database ${d.databaseMB} MB, seeded in ${d.seedSeconds} s`,
    );
  }
  out.push(
    '',
    'HTTP on 127.0.0.1 (autocannon on a worker thread; server and bare route share the main thread)',
  );
  out.push(
    table(
      ['scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'vs bare', 'idle p50 ms'],
      r.http.map((s) => [
        s.label,
        String(s.load.connections),
        int(s.load.requestsPerSecond),
        String(s.load.latencyMs.p50),
        String(s.load.latencyMs.p99),
        String(s.load.errors + s.load.timeouts),
        String(s.load.non2xx),
        `${s.vsBare.toFixed(2)}x`,
        s.idle.p50.toFixed(2),
      ]),
      (i) => i > 0,
    ),
  );
  out.push(
    '  (p50/p99 are under load at the given connections, 1 ms resolution; idle p50 is one request at a time)',
    '',
    'Store',
    `  start-up, snapshot + empty journal:   median ${int(r.startup.snapshotOnly.medianMs)} ms ` +
      `(runs: ${r.startup.snapshotOnly.runsMs.map(int).join(', ')})`,
    `  start-up, snapshot + ${r.startup.withJournal.journalMB} MB journal ` +
      `(${int(r.startup.withJournal.records)} writes): median ${int(r.startup.withJournal.medianMs)} ms ` +
      `(runs: ${r.startup.withJournal.runsMs.map(int).join(', ')}; journal filled in ${r.startup.withJournal.fillSeconds} s)`,
    `  start-up, ${int(large.sessions)}-session database: ${int(r.startup.largeDatabaseMs)} ms`,
    `  snapshot of ${r.snapshot.databaseMB} MB: export ${int(r.snapshot.exportMs)} ms ` +
      `(event loop held), total ${int(r.snapshot.totalMs)} ms`,
    '',
    'Memory',
    `  peak RSS overall ${r.memory.peakRssMB} MB`,
    `  with the ${int(small.sessions)}-session database loaded: ${r.memory.small.peakRssMB} MB = ` +
      `${r.memory.small.ratio.toFixed(2)}x its ${r.memory.small.databaseMB} MB`,
    `  with the ${int(large.sessions)}-session database loaded: ${r.memory.large.peakRssMB} MB = ` +
      `${r.memory.large.ratio.toFixed(2)}x its ${r.memory.large.databaseMB} MB`,
    `  by phase: ${Object.entries(r.memory.peakRssByPhaseMB)
      .map(([k, v]) => `${k} ${v} MB`)
      .join(', ')}`,
    '',
    'Message previews (makePreview, run on every message appended)',
    `  ${Object.entries(r.previewMs)
      .map(([k, v]) => `${k} chars: ${v} ms`)
      .join(', ')}`,
    '',
    'Targets',
  );
  out.push(
    table(
      ['target', 'wanted', 'measured', 'verdict'],
      r.targets.map((t) => [
        t.name,
        t.target,
        t.measured + (t.note ? ` (${t.note})` : ''),
        t.pass ? 'PASS' : 'MISS',
      ]),
      () => false,
    ),
  );
  if (r.problems.length > 0) out.push('', 'ERRORS', ...r.problems.map((p) => `  ${p}`));
  return out.join('\n');
}
