// Search on a team server over messages written without its index (before search came to
// PostgreSQL): two server processes catch up with them at once, each message indexed once.
import type { Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { SearchResponseSchema } from '../../src-shared/search.js';
import type { Message } from '../../src-shared/sessions.js';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { systemClock } from '../../src-main/clock.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { startTeamApp, type TeamApp } from '../helpers/team-app.js';
import { until } from '../helpers/until.js';

const said = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});
const SESSIONS = 3;
/** More than the catch-up indexes in one transaction (200), so each session takes several. */
const MESSAGES = 260;

describe('search on a team server catching up', { ...requireTools(postgresTool()), timeout: 180_000 }, () => {
  const pg = usePostgres();
  const apps: TeamApp[] = [];
  let pool: Sql | undefined;
  afterAll(async () => {
    for (const app of apps) await app.close();
    await pool?.end();
  });

  it('indexes messages written without the index, once, with two processes at it', async () => {
    const url = await pg.freshDatabase();
    // A storage without an indexer writes as a database did before search was on PostgreSQL.
    pool = await migratedPool(url);
    const unindexed: Storage = createPostgresStorage(pool);
    const accounts = createAccounts(unindexed, systemClock);
    await accounts.createUser({ email: 'ada@desk.test', name: 'Ada', password: 'correct horse battery' });
    const { organizationId } = await accounts.createWorkspace({ name: 'A', ownerEmail: 'ada@desk.test' });
    const { key } = await accounts.createKey({ organizationId });
    const ada = (await unindexed.repos.users.findByEmail('ada@desk.test'))!;
    const at = new Date().toISOString();
    for (let s = 0; s < SESSIONS; s += 1) {
      await unindexed.write((tx) =>
        tx.sessions.insert({
          id: `ses_old_${s}`,
          workspaceId: organizationId,
          authorId: ada.id,
          title: 'Old work',
          model: 'm',
          createdAt: at,
          baseBranch: 'main',
          initialMessage: `Session ${s} begins`,
        }),
      );
      for (let i = 1; i < MESSAGES; i += 1) {
        const text = i === MESSAGES - 1 ? `marmalade${s} closes it` : `step ${i} of session ${s}`;
        await unindexed.write((tx) =>
          tx.sessions.appendMessage(`ses_old_${s}`, organizationId, said(text), null, at),
        );
      }
    }
    const [none] = await pool<Array<{ n: number }>>`SELECT count(*)::int AS n FROM search_pieces`;
    expect(none?.n).toBe(0);

    apps.push(await startTeamApp(url), await startTeamApp(url));
    const [one, two] = apps as [TeamApp, TeamApp];
    const search = async (app: TeamApp, q: string) => {
      const r = await fetch(`${app.url}/api/search?organizationId=${organizationId}&q=${q}&limit=100`, {
        headers: { 'x-api-key': key },
      });
      expect(r.status).toBe(200);
      return SearchResponseSchema.parse(await r.json());
    };
    // Both started catching up when they were ready; the answer says how far they are.
    const done = await until(
      () => search(one, 'marmalade1'),
      (r) => r.indexing.complete,
      120_000,
    );
    expect(done.hits.map((h) => [h.sessionId, h.messageIndex])).toEqual([['ses_old_1', MESSAGES - 1]]);
    const [pieces] = await pool<Array<{ n: number }>>`SELECT count(*)::int AS n FROM search_pieces`;
    expect(pieces?.n).toBe(SESSIONS * MESSAGES);
    const counted = await pool<
      Array<{ search_indexed: number }>
    >`SELECT search_indexed FROM sessions ORDER BY id`;
    expect(counted.map((r) => r.search_indexed)).toEqual(Array(SESSIONS).fill(MESSAGES));
    expect((await search(two, 'step 17')).hits).toHaveLength(SESSIONS);

    // A message written without the index again: the next search says so and starts catching up.
    await unindexed.write((tx) =>
      tx.sessions.appendMessage('ses_old_0', organizationId, said('quince'), null, at),
    );
    const behind = await search(two, 'quince');
    expect(behind.indexing).toEqual({ complete: false, pendingSessions: 1 });
    const caught = await until(
      () => search(two, 'quince'),
      (r) => r.indexing.complete,
      30_000,
    );
    expect(caught.hits.map((h) => [h.sessionId, h.messageIndex])).toEqual([['ses_old_0', MESSAGES]]);
    // Caught up, a session's next message goes in with its append, seen by the other process at once.
    await one.storage.write((tx) =>
      tx.sessions.appendMessage('ses_old_0', organizationId, said('persimmon'), null, at),
    );
    const fresh = await search(two, 'persimmon');
    expect(fresh.indexing.complete).toBe(true);
    expect(fresh.hits.map((h) => h.messageIndex)).toEqual([MESSAGES + 1]);
  });
});
