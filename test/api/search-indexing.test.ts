import { afterEach, describe, expect, it } from 'vitest';
import { SearchResponseSchema } from '../../src-shared/search.js';
import { holdWriter, writeBacklog } from '../helpers/search-writer.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

/**
 * A search says whether the index held every message of the workspace when it ran: while a
 * backlog is being indexed (a first index, an import), "no hits" is not "not said anywhere".
 */
describe('GET /api/search while the index has a backlog', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.dispose();
    server = null;
  });

  it('says how many of the workspace’s sessions are still to index, then that it is complete', async () => {
    server = await startTestServer();
    const started = server;
    const owner = await seedWorkspace(started, 'owner');
    const other = await seedWorkspace(started, 'other');
    const search = async (apiKey: string, q: string) =>
      SearchResponseSchema.parse(
        await (await withKey(started, apiKey, 'GET', `/api/search?q=${q}&limit=100`)).json(),
      );
    await createSession(started, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'The wombat ledger.',
    });
    const indexed = await until(
      () => search(owner.apiKey, 'wombat'),
      (answer) => answer.hits.length === 1 && answer.indexing.complete,
    );
    expect(indexed.indexing).toEqual({ complete: true, pendingSessions: 0 });

    // The writer held, as by a long merge, while one write brings 12 sessions to this
    // workspace and 3 to another (an import, say).
    const release = await holdWriter();
    try {
      await started.store.write(() => {
        writeBacklog(started, owner, 12, 'The numbat census is in.');
        writeBacklog(started, other, 3, 'The numbat census is in.');
      });
      const early = await search(owner.apiKey, 'numbat');
      expect(early.hits).toEqual([]);
      expect(early.indexing).toEqual({ complete: false, pendingSessions: 12 });
      expect((await search(other.apiKey, 'numbat')).indexing).toEqual({
        complete: false,
        pendingSessions: 3,
      });
      // Searched by any word, the same: it is the workspace's index that is behind.
      expect((await search(owner.apiKey, 'wombat')).indexing).toEqual({
        complete: false,
        pendingSessions: 12,
      });

      release();
      const done = await until(
        () => search(owner.apiKey, 'numbat'),
        (answer) => answer.indexing.complete,
        30_000,
      );
      // Complete means every message was searched: all 12 are found.
      expect(done.indexing).toEqual({ complete: true, pendingSessions: 0 });
      expect(new Set(done.hits.map((hit) => hit.sessionId)).size).toBe(12);
    } finally {
      release();
    }
  }, 60_000);
});
