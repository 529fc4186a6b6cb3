import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Sql } from 'postgres';
import { connect } from '../src-main/store-postgres/connect.js';
import { postgresSearch } from '../src-main/store-postgres/search.js';
import { parseQuery } from '../src-main/search/query.js';
import { piecesQueryOf, type PiecesQuery } from '../src-main/search/postgres-text.js';
import {
  COMMON_SHARE,
  RANKED_MAX,
  SEARCH_SETTINGS,
  SORTED_MAX,
  shareOf,
} from '../src-main/search/postgres-search-index.js';
import { startCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { latency, type Latency } from './postgres-client.js';
import { searchGinIndexes, seedPostgresCorpus } from './postgres-corpus.js';
import { QUERIES } from './search-corpus.js';

/**
 * Run by hand: the team server's search index (GIN over each piece's words and over its
 * pairs of adjacent words) beside PostgreSQL's RUM index (the `rum` extension, Debian's
 * `postgresql-15-rum`: each word's positions, and a rank, inside the index), on one seeded
 * database, in SQL: each kind of query of the search benches, a page of 20; the indexes'
 * build time and size; and what each costs a write, pieces inserted (and rolled back).
 *
 *   node ./bin/run-ts.js bench/postgres-rum.ts --gb 1         seeds a throw-away cluster
 *   node ./bin/run-ts.js bench/postgres-rum.ts --url URL      a database `bench/postgres-corpus.ts` seeded
 *
 * The RUM index is made and dropped again; nothing else in the database changes.
 */

const { values: flags } = parseArgs({
  options: {
    gb: { type: 'string' },
    url: { type: 'string' },
    runs: { type: 'string', default: '5' },
    out: {
      type: 'string',
      default: fileURLToPath(new URL('./postgres-rum-results.json', import.meta.url)),
    },
  },
});
if ((flags.gb === undefined) === (flags.url === undefined)) throw new Error('give either --gb or --url');
const RUNS = Number(flags.runs);
const PAGE = 21;
/** No single statement runs longer than this: a strategy that would is noted as over it. */
const TIMEOUT_MS = 10_000;
const progress = (line: string) => process.stderr.write(`${line}\n`);

type Strategy = (sql: Sql, q: PiecesQuery, workspaceId: string) => Promise<unknown>;

/** Each query of each kind RUNS times (after one not counted); a statement over TIMEOUT_MS counts as that. */
async function measure(sql: Sql, workspaceId: string, strategy: Strategy) {
  const kinds: Record<string, Latency> = {};
  for (const [kind, texts] of Object.entries(QUERIES)) {
    const samples: number[] = [];
    for (const text of texts) {
      const parsed = parseQuery(text);
      const q = 'refused' in parsed ? null : piecesQueryOf(parsed.terms);
      if (q === null) throw new Error(`the bench's query ${text} searches for nothing`);
      for (let n = 0; n <= RUNS; n += 1) {
        const started = performance.now();
        const timedOut = await strategy(sql, q, workspaceId).then(
          () => false,
          (err: unknown) => {
            if ((err as { code?: string }).code !== '57014') throw err;
            return true;
          },
        );
        if (n > 0) samples.push(timedOut ? TIMEOUT_MS : performance.now() - started);
        if (timedOut) break;
      }
    }
    kinds[kind] = latency(samples);
  }
  return kinds;
}

async function main(): Promise<void> {
  let cluster: PostgresCluster | undefined;
  let url = flags.url;
  if (!url) {
    cluster = await startCluster();
    url = await cluster.createDatabase('bench');
    progress(`seeding ${flags.gb} GB into PostgreSQL`);
    const corpus = await seedPostgresCorpus(url, {
      gb: Number(flags.gb),
      smallSessions: 2000,
      hugeMB: 165,
      progress,
    });
    progress(`  ${(corpus.seedMs / 1000).toFixed(0)} s`);
  }
  const sql = await connect(url, {
    max: 1,
    settings: { statement_timeout: String(TIMEOUT_MS), ...SEARCH_SETTINGS },
  });
  try {
    await sql`ANALYZE search_pieces`;
    const [{ id: workspaceId } = { id: '' }] = await sql<Array<{ id: string }>>`
      SELECT workspace_id AS id FROM sessions GROUP BY workspace_id ORDER BY count(*) DESC LIMIT 1`;
    const search = postgresSearch(sql);
    const statistics = await search.statistics();
    const [size] = await sql<Array<{ pieces: number; words: number; pairs: number }>>`
      SELECT (SELECT count(*) FROM search_pieces)::int AS pieces,
        pg_relation_size('search_pieces_body')::bigint AS words, pg_relation_size('search_pieces_pairs')::bigint AS pairs`;

    progress("the team server's search (GIN over words and pairs)");
    const gin = await measure(sql, workspaceId, (_, q, ws) =>
      search.find(
        { ...q, workspaceId: ws },
        {
          offset: 0,
          limit: PAGE,
          rankedMax: RANKED_MAX,
          sortedMax: SORTED_MAX,
          common: shareOf(q, statistics) >= COMMON_SHARE,
        },
      ),
    );

    progress('building the RUM index');
    await sql`CREATE EXTENSION IF NOT EXISTS rum`;
    const buildStarted = performance.now();
    await sql.begin(async (tx) => {
      await tx`SET LOCAL maintenance_work_mem = '1GB'`;
      await tx`SET LOCAL statement_timeout = 0`;
      await tx`CREATE INDEX search_pieces_rum ON search_pieces USING rum (body rum_tsvector_ops)`;
    });
    const rumBuildMs = performance.now() - buildStarted;
    const [rumSize] = await sql<Array<{ bytes: number }>>`
      SELECT pg_relation_size('search_pieces_rum')::bigint AS bytes`;
    // The GIN indexes dropped, so that the planner takes RUM, and made again after with their
    // own definitions (as the migrations wrote them).
    const ginIndexes = await searchGinIndexes(sql);
    for (const index of ginIndexes) await sql`DROP INDEX ${sql(index.name)}`;
    progress('RUM, best first and newest first');
    // A page of the pieces matching the whole search (positions checked in the index), in
    // RUM's rank or newest first.
    const rumPage =
      (order: 'ranked' | 'newest'): Strategy =>
      (db, q, ws) =>
        db`SELECT p.session_id, p.message_index FROM search_pieces p
          JOIN sessions s ON s.id = p.session_id
          WHERE p.body @@ ${q.rank}::tsquery AND s.workspace_id = ${ws}
          ORDER BY ${order === 'ranked' ? db`p.body <=> ${q.rank}::tsquery` : db`p.written DESC`}
          LIMIT ${PAGE}`;
    const rum = {
      ranked: await measure(sql, workspaceId, rumPage('ranked')),
      newest: await measure(sql, workspaceId, rumPage('newest')),
    };
    progress('the GIN indexes made again');
    await sql.begin(async (tx) => {
      await tx`SET LOCAL maintenance_work_mem = '1GB'`;
      await tx`SET LOCAL statement_timeout = 0`;
      for (const index of ginIndexes) await tx.unsafe(index.definition);
    });

    progress('writes: pieces inserted under each set of indexes (rolled back)');
    const insertCost = async (drop: string[]) => {
      let result = { pieces: 0, ms: 0, walBytes: 0 };
      await sql
        .begin(async (tx) => {
          await tx`SET LOCAL statement_timeout = 0`;
          for (const index of drop) await tx`DROP INDEX ${tx(index)}`;
          const [before] = await tx<Array<{ lsn: string }>>`SELECT pg_current_wal_insert_lsn()::text AS lsn`;
          const started = performance.now();
          const inserted = await tx`INSERT INTO search_pieces
              (session_id, message_index, chunk, frame_offset, piece_start, body, pairs)
            SELECT session_id, message_index + 1000000000, chunk, frame_offset, piece_start, body, pairs
            FROM search_pieces WHERE written % 50 = 7 LIMIT 2000`;
          const ms = performance.now() - started;
          const [wal] = await tx<Array<{ bytes: number }>>`
            SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${before?.lsn ?? '0/0'}::pg_lsn)::bigint AS bytes`;
          result = { pieces: inserted.count, ms, walBytes: wal?.bytes ?? 0 };
          throw new Error('rollback');
        })
        .catch((err: unknown) => {
          if ((err as Error).message !== 'rollback') throw err;
        });
      return result;
    };
    const writes = {
      none: await insertCost(['search_pieces_body', 'search_pieces_pairs', 'search_pieces_rum']),
      words: await insertCost(['search_pieces_pairs', 'search_pieces_rum']),
      'words and pairs (the team server)': await insertCost(['search_pieces_rum']),
      'RUM (words with positions)': await insertCost(['search_pieces_body', 'search_pieces_pairs']),
    };
    await sql`DROP INDEX search_pieces_rum`;

    const results = {
      measuredAt: new Date().toISOString(),
      loadAverage: loadavg(),
      pieces: size?.pieces,
      indexMB: {
        words: (size?.words ?? 0) / 2 ** 20,
        pairs: (size?.pairs ?? 0) / 2 ** 20,
        rum: (rumSize?.bytes ?? 0) / 2 ** 20,
      },
      rumBuildSeconds: rumBuildMs / 1000,
      search: { gin, rumRanked: rum.ranked, rumNewest: rum.newest },
      writes,
    };
    writeFileSync(flags.out ?? '', `${JSON.stringify(results, null, 2)}\n`);
    const rows = Object.keys(QUERIES).map((kind) => {
      const cell = (l: Latency | undefined) =>
        l ? `${l.p50Ms.toFixed(1)} / ${l.p99Ms.toFixed(1)} / ${l.maxMs.toFixed(0)}` : '';
      return `| ${kind} | ${cell(gin[kind])} | ${cell(rum.ranked[kind])} | ${cell(rum.newest[kind])} |`;
    });
    process.stdout.write(
      [
        `${size?.pieces} pieces; GIN words ${results.indexMB.words.toFixed(0)} MB, pairs ${results.indexMB.pairs.toFixed(0)} MB; RUM ${results.indexMB.rum.toFixed(0)} MB, built in ${results.rumBuildSeconds.toFixed(0)} s`,
        '',
        '| query kind, p50 / p99 / slowest (ms) | GIN words and pairs (the team server) | RUM, best first (`<=>`) | RUM, newest first |',
        '| --- | --- | --- | --- |',
        ...rows,
        '',
        '| indexes written | ms per piece | WAL per piece (KB) |',
        '| --- | --- | --- |',
        ...Object.entries(writes).map(
          ([what, w]) =>
            `| ${what} | ${(w.ms / w.pieces).toFixed(2)} | ${(w.walBytes / w.pieces / 1024).toFixed(0)} |`,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    await sql.end({ timeout: 5 });
    await cluster?.stop();
  }
}

await main();
