import { newId } from '../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';
import type { Storage } from '../src-main/store/storage.js';
import { Store } from '../src-main/store/store.js';
import type { Sql } from 'postgres';
import { connect } from '../src-main/store-postgres/connect.js';
import { migratePostgres } from '../src-main/store-postgres/migrations.js';
import { createPostgresStorage } from '../src-main/store-postgres/storage.js';
import { indexMessage } from '../src-main/search/postgres-text.js';
import { seedStorage, type Seeded } from './search-corpus.js';

/**
 * The corpus of `npm run bench:postgres`, written the same way into either database: the
 * search benches' sessions of real sizes (bench/search-corpus.ts), then small sessions that
 * make the list long and give the filtered page and the follow-ups their sessions.
 */

export interface CorpusOptions {
  /** The search corpus's transcripts, in GB (2^30 bytes). */
  gb: number;
  /** Sessions of a prompt and one answer, ten days old: one in ten failed, the rest completed. */
  smallSessions: number;
  /** One session of this many MB beside them (0: none), as the largest a heavy user has. */
  hugeMB: number;
  progress?: (line: string) => void;
}

export interface BenchCorpus extends Seeded {
  /** The small sessions in the order written (the first ones take the follow-ups). */
  smallIds: string[];
  /** How many small sessions are failed: what the filtered page lists. */
  failed: number;
}

/** One small session in ten is failed, so that the filtered page is a tenth of them. */
export const isFailed = (n: number) => n % 10 === 3;
const SMALL_PER_WRITE = 250;

export async function seedBenchCorpus(storage: Storage, options: CorpusOptions): Promise<BenchCorpus> {
  const seeded = await seedStorage(storage, options.gb * 1024, {
    ...(options.progress ? { progress: options.progress } : {}),
    hugeMB: options.hugeMB,
  });
  const started = performance.now();
  const tenDaysAgo = Date.now() - 10 * 86_400_000;
  const smallIds: string[] = [];
  let failed = 0;
  for (let first = 0; first < options.smallSessions; first += SMALL_PER_WRITE) {
    await storage.write(async (tx) => {
      for (let n = first; n < Math.min(options.smallSessions, first + SMALL_PER_WRITE); n += 1) {
        const id = newId('session');
        const at = new Date(tenDaysAgo + n * 1000).toISOString();
        await tx.sessions.insert({
          id,
          workspaceId: seeded.organizationId,
          authorId: seeded.userId,
          title: `Small session ${n}: rename a variable`,
          model: 'claude-opus-4-6',
          createdAt: at,
          baseBranch: 'main',
          initialMessage: `Small session ${n}: rename the variable and keep the tests green`,
        });
        await tx.sessions.appendMessage(
          id,
          seeded.organizationId,
          {
            type: 'assistant',
            message: { content: [{ type: 'text', text: `Renamed it in session ${n}.` }] },
          },
          null,
          at,
        );
        await tx.sessions.update(id, { status: isFailed(n) ? 'failed' : 'completed' }, at);
        if (isFailed(n)) failed += 1;
        smallIds.push(id);
      }
    });
  }
  return { ...seeded, smallIds, failed, seedMs: seeded.seedMs + (performance.now() - started) };
}

/** The corpus in a new data directory, through the sql.js store (closed with a snapshot). */
export async function seedSqljsCorpus(dataDir: string, options: CorpusOptions): Promise<BenchCorpus> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    return await seedBenchCorpus(storageOf(store), options);
  } finally {
    await store.close();
  }
}

/** The search pieces' GIN indexes (words, pairs), each with its definition to make it again. */
export function searchGinIndexes(sql: Sql) {
  return sql<Array<{ name: string; definition: string }>>`
    SELECT indexname AS name, indexdef AS definition FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename = 'search_pieces' AND indexdef LIKE '% USING gin %'`;
}

/** What seeding PostgreSQL took: the appends, then the search index's build (both in seedMs). */
export interface PostgresCorpus extends BenchCorpus {
  indexBuildMs: number;
}

/**
 * The corpus in an empty PostgreSQL database, migrated as `serve --database` migrates it, then
 * through the PostgreSQL repositories: every message by the same `appendMessage` the server
 * calls, with its search pieces, about 2 MB of messages per transaction. The pieces' GIN
 * indexes are dropped for the appends and made again after, with the migrations' own
 * definitions: PostgreSQL builds a GIN index from sorted entries many times faster than it
 * inserts them a piece at a time (the catch-up's rate, which the bench measures apart), and
 * that makes a 3 GB corpus a matter of minutes.
 */
export async function seedPostgresCorpus(url: string, options: CorpusOptions): Promise<PostgresCorpus> {
  const sql = await connect(url);
  try {
    await migratePostgres(sql, { now: () => systemClock.now() });
    const indexes = await searchGinIndexes(sql);
    for (const index of indexes) await sql`DROP INDEX ${sql(index.name)}`;
    // Each message into the search pieces in its append's transaction, as a team server writes.
    const corpus = await seedBenchCorpus(createPostgresStorage(sql, { indexer: indexMessage }), options);
    const started = performance.now();
    await sql.begin(async (tx) => {
      await tx`SET LOCAL maintenance_work_mem = '1GB'`;
      for (const index of indexes) await tx.unsafe(index.definition);
    });
    const indexBuildMs = performance.now() - started;
    return { ...corpus, indexBuildMs, seedMs: corpus.seedMs + indexBuildMs };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Takes the search pieces of the given sessions out of the index, as if their messages had
 * been written before the index (an import, a new index format): the server's catch-up
 * indexes them again when it starts.
 */
export async function unindexSessions(url: string, ids: string[]): Promise<void> {
  const sql = await connect(url);
  try {
    await sql.begin(async (tx) => {
      await tx`DELETE FROM search_pieces WHERE session_id = ANY(${ids})`;
      await tx`UPDATE sessions SET search_indexed = 0 WHERE id = ANY(${ids})`;
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
}
