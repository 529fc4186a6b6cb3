// The corpus of `npm run bench:postgres` is the same on both databases it compares: the same
// sessions, each with the same messages, statuses and transcript lengths, as its seeding counted.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { systemClock, silentLogger } from '../../src-main/clock.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import { readsOf } from '../../src-main/store/sqljs-storage.js';
import { Store } from '../../src-main/store/store.js';
import type { TranscriptReads } from '../../src-main/sessions/transcript-reads.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import {
  isFailed,
  seedPostgresCorpus,
  seedSqljsCorpus,
  type BenchCorpus,
} from '../../bench/postgres-corpus.js';
import { LAST_MARKER } from '../../bench/search-corpus.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { useCleanups } from '../helpers/cleanups.js';
import { requireTools } from '../helpers/require-tools.js';
import { tempDir } from '../helpers/server.js';

const SMALL = 30;
const options = { gb: 2 / 1024, smallSessions: SMALL, hugeMB: 3 };

/** Every session of the corpus's workspace as the list reads it, by title. */
async function held(reads: TranscriptReads, corpus: BenchCorpus) {
  const rows = await reads.storage.repos.sessions.list(corpus.organizationId, {}, {});
  return new Map(
    rows.map((row) => [
      row.title,
      { messages: row.messageCount, transcriptBytes: row.transcriptBytes, status: row.status },
    ]),
  );
}

describe('the PostgreSQL bench corpus', { ...requireTools(postgresTool()), timeout: 180_000 }, () => {
  const pg = usePostgres();
  const cleanup = useCleanups();

  it('holds the same sessions and messages on sql.js and PostgreSQL, as the seeding counted them', async () => {
    const dataDir = tempDir();
    cleanup(() => rmSync(dataDir, { recursive: true, force: true }));
    const url = await pg.freshDatabase();
    const sqljsCorpus = await seedSqljsCorpus(dataDir, options);
    const pgCorpus = await seedPostgresCorpus(url, options);

    const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
    const sql = await migratedPool(url);
    try {
      const onSqljs = readsOf(store);
      const { transcripts, ...storage } = createPostgresStorage(sql);
      const onPostgres = { storage, transcripts };
      const sessions = await held(onSqljs, sqljsCorpus);
      expect(sessions.size).toBe(sqljsCorpus.written.length + SMALL);
      expect(await held(onPostgres, pgCorpus)).toEqual(sessions);

      // The sessions of real sizes hold the messages the seeding counted.
      const byId = new Map(
        (await onSqljs.storage.repos.sessions.list(sqljsCorpus.organizationId, {}, {})).map((r) => [r.id, r]),
      );
      for (const written of sqljsCorpus.written)
        expect(byId.get(written.id)?.messageCount).toBe(written.messages);
      expect(sqljsCorpus.written.reduce((sum, s) => sum + s.bytes, 0)).toBeGreaterThan(5 * 1024 * 1024);
      // The huge session comes first, of the size asked.
      expect(pgCorpus.written[0]?.bytes).toBeGreaterThanOrEqual(3 * 1024 * 1024);
      expect(pgCorpus.written[0]?.bytes).toBeLessThan(3.5 * 1024 * 1024);
      expect(pgCorpus.written.slice(1).every((s) => s.bytes < 3 * 1024 * 1024)).toBe(true);

      // One small session in ten is failed: the filtered page's sessions.
      const failed = await storage.repos.sessions.list(pgCorpus.organizationId, { status: 'failed' }, {});
      expect(failed.length).toBe(Array.from({ length: SMALL }, (_, n) => n).filter(isFailed).length);
      expect(pgCorpus.failed).toBe(failed.length);

      // Written as a team server writes: every message already in its search index.
      const [unindexed] = await sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM sessions
        WHERE search_indexed < message_count`;
      expect(unindexed?.n).toBe(0);

      // The same messages, down to the last one's marker the search bench waits for.
      const last = await readAllMessages(onPostgres, pgCorpus.lastSessionId);
      expect(last).toEqual(await readAllMessages(onSqljs, sqljsCorpus.lastSessionId));
      expect(JSON.stringify(last.at(-1))).toContain(LAST_MARKER);
    } finally {
      await store.close();
      await sql.end();
    }
  });
});
