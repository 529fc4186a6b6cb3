import { join } from 'node:path';
import { test as base, expect } from '@playwright/test';
import { SearchResponseSchema } from '../../src-shared/search.js';
import { ROOT } from '../helpers/cli.js';
import { holdWriter, writeBacklog } from '../helpers/search-writer.js';
import {
  createSession,
  PASSWORD,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { signIn } from './fixtures.js';

/**
 * The server runs in this process, serving the built dashboard: its index writer is a thread
 * of this process, which the test holds (as a long merge would) to keep a backlog in front of
 * the search, then lets go.
 */
const test = base.extend<{
  served: { server: TestServer; owner: Awaited<ReturnType<typeof seedWorkspace>> };
}>({
  served: async ({}, use) => {
    const server = await startTestServer({ rendererDir: join(ROOT, 'out', 'renderer') });
    const owner = await seedWorkspace(server, 'owner');
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'The wombat ledger.',
    });
    await until(
      async () =>
        SearchResponseSchema.parse(
          await (await withKey(server, owner.apiKey, 'GET', '/api/search?q=wombat')).json(),
        ).indexing.complete,
      (complete) => complete,
    );
    await use({ server, owner });
    await server.dispose();
  },
});

test('while the index has a backlog, a search says results may be incomplete, then shows them', async ({
  page,
  served: { server, owner },
}) => {
  const release = await holdWriter();
  try {
    await server.store.write(() => writeBacklog(server, owner, 5, 'The numbat census is in.'));

    await signIn(page, `${server.url}/?in=transcripts&q=numbat`, owner.user.email, PASSWORD);
    await expect(page.getByRole('heading', { name: 'No messages match yet' })).toBeVisible();
    await expect(page.getByRole('status').filter({ hasText: 'Still indexing' })).toHaveText(
      'Still indexing 5 sessions: results may be incomplete.',
    );
    await expect(page.getByText('No transcript of this workspace says')).toHaveCount(0);

    // Once the index has caught up, the page asks again by itself and shows every match.
    release();
    const matches = page.getByRole('region', { name: 'Transcript matches' });
    await expect(matches.getByRole('list', { name: /^Matches in Backlog \d$/u })).toHaveCount(5);
    await expect(page.getByText('Still indexing')).toHaveCount(0);
  } finally {
    release();
  }
});
