import type { Latency } from './postgres-client.js';
import type { Costs } from './postgres-costs.js';

/** The table `bench/postgres.ts` prints: sql.js and PostgreSQL side by side, with ratios. */

export const SHAPE = {
  /** Sessions taking follow-ups at once. */
  FOLLOW_UP_SESSIONS: 32,
  /** Clients reading list pages at once. */
  LIST_CLIENTS: 8,
  /** The dashboard reads a transcript in pages of this many messages (TRANSCRIPT_PAGE). */
  DASHBOARD_PAGE: 100,
};

type Side<T> = { sqljs: T; postgres: T };
type Rate = Latency & { perSecond: number; costs?: Costs };
type FollowUps = Rate & { messagesPerSecond: number };
type Memory = { rssMB: number; peakRssMB: number };

export interface Report {
  listFirst: Side<Latency>;
  listFiltered: Side<Latency>;
  listRepeated: Side<Latency>;
  corpus: { largeSessionMB: number; hugeSessionMB: number };
  largeSession: Side<{ open: Latency; wholeMs: number; jsonMB: number }>;
  hugeSession: Side<{
    open: Latency;
    wholeMs: number;
    jsonMB: number;
    whole: { ms: number; jsonMB: number };
  }>;
  search: Side<(Latency & { kinds?: Record<string, Latency> }) | null>;
  /** The team server's catch-up: so many MB of sessions left out of its index, indexed in so long. */
  catchUp?: { mb: number; seconds: number };
  followUp: Side<FollowUps>;
  listLoad: Side<Rate>;
  twoProcesses: { followUp: FollowUps; list: Rate; rss: Memory[] };
  rss: Record<string, Side<Memory>>;
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);
/** A row of one figure on either side and the second's ratio to the first. */
const compared = (what: string, first: number, second: number, digits = 1) => [
  what,
  fixed(first, digits),
  fixed(second, digits),
  `${fixed(second / first, 2)}x`,
];
const spread = (l: Latency | null) => (l ? `${fixed(l.p50Ms)} / ${fixed(l.p99Ms)}` : 'not measured');

function render(head: string[], body: string[][]): string {
  return [head, head.map(() => '---'), ...body].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The side-by-side tables (Markdown, as RESULTS.md takes them). */
export function table(r: Report): string {
  const { FOLLOW_UP_SESSIONS, LIST_CLIENTS, DASHBOARD_PAGE } = SHAPE;
  const rows: string[][] = [];
  const costRows = (what: string, side: Side<Rate>) => {
    const [sqljs, postgres] = [side.sqljs.costs, side.postgres.costs];
    if (!sqljs || !postgres) return;
    rows.push(compared(`server CPU per ${what} (ms)`, sqljs.serverCpuMs, postgres.serverCpuMs, 2));
    rows.push([`database CPU per ${what} (ms)`, '', fixed(postgres.databaseCpuMs ?? NaN, 2), '']);
    rows.push([
      `statements / transactions per ${what}`,
      '',
      `${fixed(postgres.statements ?? NaN)} / ${fixed(postgres.transactions ?? NaN)}`,
      '',
    ]);
  };
  const latencyRows = (what: string, side: Side<Latency>) => {
    rows.push(compared(`${what}, p50 (ms)`, side.sqljs.p50Ms, side.postgres.p50Ms));
    rows.push(compared(`${what}, p99 (ms)`, side.sqljs.p99Ms, side.postgres.p99Ms));
  };
  latencyRows('list, first page of 50 after a change', r.listFirst);
  latencyRows('list, filtered page (status=failed) after a change', r.listFiltered);
  latencyRows('list, first page unchanged (sql.js: its cache)', r.listRepeated);
  const sessionRows = (name: string, read: Report['largeSession']) => {
    latencyRows(`${name}, its last page of ${DASHBOARD_PAGE} messages`, {
      sqljs: read.sqljs.open,
      postgres: read.postgres.open,
    });
    rows.push(
      compared(
        `${name} read through in pages of ${DASHBOARD_PAGE} (ms)`,
        read.sqljs.wholeMs,
        read.postgres.wholeMs,
        0,
      ),
    );
  };
  sessionRows(`${fixed(r.corpus.largeSessionMB)} MB session`, r.largeSession);
  const huge = r.hugeSession;
  sessionRows(`${fixed(r.corpus.hugeSessionMB, 0)} MB session`, huge);
  rows.push(
    compared(
      `${fixed(r.corpus.hugeSessionMB, 0)} MB session whole, GET /api/sessions/{id} (ms)`,
      huge.sqljs.whole.ms,
      huge.postgres.whole.ms,
      0,
    ),
  );
  if (r.search.sqljs && r.search.postgres) {
    latencyRows('search', { sqljs: r.search.sqljs, postgres: r.search.postgres });
    rows.push(compared('search, the slowest query (ms)', r.search.sqljs.maxMs, r.search.postgres.maxMs));
    for (const [kind, sqljs] of Object.entries(r.search.sqljs.kinds ?? {})) {
      const postgres = r.search.postgres.kinds?.[kind];
      if (!postgres) continue;
      rows.push(compared(`search, ${kind} queries, p50 (ms)`, sqljs.p50Ms, postgres.p50Ms));
      rows.push(compared(`search, ${kind} queries, p99 (ms)`, sqljs.p99Ms, postgres.p99Ms));
    }
  } else
    rows.push([
      'search, p50 / p99 (ms)',
      spread(r.search.sqljs),
      spread(r.search.postgres),
      r.search.postgres ? '' : 'not measured: search not on PostgreSQL',
    ]);
  if (r.catchUp)
    rows.push([
      `search index caught up after start, ${fixed(r.catchUp.mb, 0)} MB of sessions (MB/s)`,
      '',
      fixed(r.catchUp.mb / r.catchUp.seconds, 2),
      '',
    ]);
  const { followUp, listLoad } = r;
  rows.push(
    compared(
      `follow-ups per second, ${FOLLOW_UP_SESSIONS} sessions at once`,
      followUp.sqljs.perSecond,
      followUp.postgres.perSecond,
      0,
    ),
    compared(
      'messages appended per second by them',
      followUp.sqljs.messagesPerSecond,
      followUp.postgres.messagesPerSecond,
      0,
    ),
  );
  latencyRows('follow-up', followUp);
  costRows('follow-up', followUp);
  rows.push(
    compared(
      `list reads per second, ${LIST_CLIENTS} clients, a change before each`,
      listLoad.sqljs.perSecond,
      listLoad.postgres.perSecond,
      0,
    ),
  );
  latencyRows(`list under ${LIST_CLIENTS} clients`, listLoad);
  costRows('list read', listLoad);
  for (const [phase, side] of Object.entries(r.rss))
    rows.push(compared(`RSS ${phase} (MB)`, side.sqljs.rssMB, side.postgres.rssMB, 0));
  const last = Object.values(r.rss).at(-1);
  if (last) rows.push(compared('peak RSS (MB)', last.sqljs.peakRssMB, last.postgres.peakRssMB, 0));

  const one = { followUp: followUp.postgres, list: listLoad.postgres };
  const two = r.twoProcesses;
  const cost = (rate: Rate, pick: (c: Costs) => number | undefined, digits = 2) =>
    rate.costs ? fixed(pick(rate.costs) ?? NaN, digits) : '';
  const costPair = (what: string, a: Rate, b: Rate, pick: (c: Costs) => number | undefined, digits = 2) => [
    what,
    cost(a, pick, digits),
    cost(b, pick, digits),
    '',
  ];
  const twoRows = [
    compared('follow-ups per second', one.followUp.perSecond, two.followUp.perSecond, 0),
    compared(
      'messages appended per second',
      one.followUp.messagesPerSecond,
      two.followUp.messagesPerSecond,
      0,
    ),
    ['follow-up p50 / p99 (ms)', spread(one.followUp), spread(two.followUp), ''],
    costPair(
      'server CPU per follow-up, processes added (ms)',
      one.followUp,
      two.followUp,
      (c) => c.serverCpuMs,
    ),
    costPair('database CPU per follow-up (ms)', one.followUp, two.followUp, (c) => c.databaseCpuMs),
    costPair('statements per follow-up', one.followUp, two.followUp, (c) => c.statements, 1),
    compared('list reads per second', one.list.perSecond, two.list.perSecond, 0),
    ['list p50 / p99 (ms)', spread(one.list), spread(two.list), ''],
    costPair('server CPU per list read, processes added (ms)', one.list, two.list, (c) => c.serverCpuMs),
    costPair('database CPU per list read (ms)', one.list, two.list, (c) => c.databaseCpuMs),
    costPair('statements per list read', one.list, two.list, (c) => c.statements, 1),
    [
      'RSS of each process (MB)',
      fixed(last?.postgres.rssMB ?? NaN, 0),
      two.rss.map((m) => fixed(m.rssMB, 0)).join(' + '),
      '',
    ],
  ];
  return `${render(['', 'sql.js', 'PostgreSQL', 'PostgreSQL / sql.js'], rows)}\n\n${render(
    ['PostgreSQL', 'one process', 'two processes, one database', 'two / one'],
    twoRows,
  )}\n\n${render(['What scales (two processes)', 'follow-ups', 'list reads'], scaling(two))}`;
}

/**
 * What more cores would give, from what a request costs with two processes: each server
 * process serves at most one core's worth (1000 ms over its CPU per request), the database
 * as many requests as its cores' worth over its CPU per request, and one machine running both
 * as many as its cores over their sum (the bench's own load generator left out).
 */
function scaling(two: Report['twoProcesses']): string[][] {
  const per = (rate: Rate, cores: number, pick: (c: Costs) => number) =>
    rate.costs ? fixed((cores * 1000) / pick(rate.costs), 0) : '';
  const both = (c: Costs) => c.serverCpuMs + (c.databaseCpuMs ?? 0);
  return [
    [
      'requests per second per server process (one core each)',
      per(two.followUp, 1, (c) => c.serverCpuMs),
      per(two.list, 1, (c) => c.serverCpuMs),
    ],
    [
      'requests per second per core of the database',
      per(two.followUp, 1, (c) => c.databaseCpuMs ?? NaN),
      per(two.list, 1, (c) => c.databaseCpuMs ?? NaN),
    ],
    ...[2, 8, 16].map((cores) => [
      `expected requests per second, ${cores} cores running the processes and the database`,
      per(two.followUp, cores, both),
      per(two.list, cores, both),
    ]),
  ];
}
