import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchResponse } from '../../src-shared/search.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { assistantText as text } from '../helpers/messages.js';
import { until } from '../helpers/until.js';

/**
 * A search is SQLite's work from start to end, and a prefix reads the postings of every word it
 * starts: a query of many prefixes over a large index can take seconds. These are the bounds
 * that keep one search from holding the server, with the real server over HTTP.
 */

/** Every word of the transcript starts with it, so each of its prefixes reads every posting. */
const STEM = 'quokkacensusburrowislandtwicecountedagainandagain';
const MESSAGES = 1_000;
const WORDS_PER_MESSAGE = 60;
/**
 * 27 prefixes of the stem (what 500 characters hold), each of them every word: allowed, and
 * costly. With a word found nowhere it has no hits, so its answer comes as soon as SQLite is
 * done, with no transcript read after.
 */
const COSTLY = `${Array.from({ length: 27 }, (_, i) => `${STEM.slice(0, 3 + i)}*`).join(' ')} unwritten`;

type Answer = SearchResponse & { error?: { code: string; message: string; details?: unknown[] } };

describe('GET /api/search, bounded', () => {
  const dataDir = tempDir();
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;

  const search = async (q: string) => {
    const response = await withKey(server, owner.apiKey, 'GET', `/api/search?q=${encodeURIComponent(q)}`);
    return { status: response.status, body: (await response.json()) as Answer };
  };

  beforeAll(async () => {
    // A limit far above what the costly search takes here; the last test sets a low one.
    server = await startTestServer({ dataDir, searchTimeLimitMs: 120_000 });
    owner = await seedWorkspace(server, 'owner');
    const id = (
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Count the quokkas.',
      })
    ).id;
    let word = 0;
    await server.store.write(() => {
      for (let m = 0; m < MESSAGES; m += 1) {
        const words = Array.from({ length: WORDS_PER_MESSAGE }, () => `${STEM}${(word++).toString(36)}`);
        if (m === MESSAGES - 1) words.push('lastquokkacounted');
        server.repos.sessions.appendMessage(
          id,
          owner.organizationId,
          text(words.join(' ')),
          null,
          new Date().toISOString(),
        );
      }
    });
    // Indexed in the background: the last message's own word says it is all in.
    await until(
      async () => (await search('lastquokkacounted')).body.hits ?? [],
      (hits) => hits.length === 1,
      120_000,
    );
  }, 180_000);
  afterAll(() => server.dispose());

  it('refuses too many words and too short prefixes with 400, naming the limit', async () => {
    const tooMany = await search(Array.from({ length: 33 }, (_, i) => `word${i}`).join(' '));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error?.code).toBe('validation_failed');
    expect(tooMany.body.error?.message).toBe('Search for at most 32 words at once; this search has 33');
    expect(tooMany.body.error?.details).toEqual([
      {
        path: 'query.q',
        message:
          'has 33 words (a phrase counts each of its words; a word repeated counts once), more than 32',
      },
    ]);
    // A phrase counts each of its words.
    const phrase = await search(`"${Array.from({ length: 33 }, (_, i) => `word${i}`).join(' ')}"`);
    expect(phrase.status).toBe(400);

    for (const q of ['ab*', Array.from({ length: 166 }, () => 'a*').join(' '), 'quokka x*']) {
      const short = await search(q);
      expect(short.status, q).toBe(400);
      expect(short.body.error?.message, q).toMatch(
        /^A prefix needs at least 3 letters or digits before its \*; “\w{1,2}\*” has [12]$/u,
      );
    }

    // A repeated word counts once: 100 times the same prefix is one prefix, and quick.
    const repeated = await search(Array.from({ length: 100 }, () => 'las*').join(' '));
    expect(repeated.status).toBe(200);
    expect(repeated.body.hits).toHaveLength(1);
    expect((await search(Array.from({ length: 32 }, (_, i) => `word${i}`).join(' '))).status).toBe(200);
  });

  it('runs a costly search off the request thread: the session list answers while it runs', async () => {
    let searchDone = false;
    const costly = search(COSTLY).finally(() => (searchDone = true));
    // One list request after another, each sent once the last has answered: while the search
    // held the event loop, none sent after it began could answer before it.
    let listedDuringSearch = 0;
    while (!searchDone) {
      const list = await withKey(server, owner.apiKey, 'GET', '/api/sessions');
      expect(list.status).toBe(200);
      await list.arrayBuffer();
      if (!searchDone) listedDuringSearch += 1;
    }
    const { status, body } = await costly;
    expect(status).toBe(200);
    expect(body.hits).toEqual([]);
    expect(listedDuringSearch).toBeGreaterThanOrEqual(10);
  }, 60_000);

  it('answers a search past the time limit 503, saying so, and searches again after it', async () => {
    // The same data directory, served with a time limit of 100 ms.
    await server.stop();
    server = await startTestServer({ dataDir, searchTimeLimitMs: 100 });
    const response = await withKey(
      server,
      owner.apiKey,
      'GET',
      `/api/search?q=${encodeURIComponent(COSTLY)}`,
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    const body = (await response.json()) as Answer;
    expect(body.error?.code).toBe('unavailable');
    expect(body.error?.message).toBe(
      'This search took longer than 0.1 s and was stopped: search for rarer words, fewer prefixes or longer ones',
    );
    // A flood of them: one runs at a time, eight wait their turn, the rest are refused at once.
    const flood = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const answer = await withKey(
          server,
          owner.apiKey,
          'GET',
          `/api/search?q=${encodeURIComponent(COSTLY)}`,
        );
        return { status: answer.status, message: ((await answer.json()) as Answer).error?.message };
      }),
    );
    expect(flood.map((a) => a.status)).toEqual(Array.from({ length: 10 }, () => 503));
    expect(flood.map((a) => a.message)).toContain(
      'Search is busy: 8 searches are waiting for their turn; try again in a moment',
    );
    // The list answers meanwhile, and a cheap search once the stopped ones have let go.
    expect((await withKey(server, owner.apiKey, 'GET', '/api/sessions')).status).toBe(200);
    const cheap = await withKey(server, owner.apiKey, 'GET', '/api/search?q=lastquokkacounted');
    expect(cheap.status).toBe(200);
    expect(((await cheap.json()) as SearchResponse).hits).toHaveLength(1);
  }, 60_000);
});
