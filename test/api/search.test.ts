import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchResponseSchema, type SearchResponse } from '../../src-shared/search.js';
import type { Message } from '../../src-shared/sessions.js';
import { runCli } from '../helpers/cli.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { assistantText as text, runResult } from '../helpers/messages.js';
import { until } from '../helpers/until.js';
import { sqljsOnly } from '../helpers/require-tools.js';

/** A file of about 2 MB whose one rare word sits near its end. */
const BIG_FILE = `${'const filler = "nothing to see here";\n'.repeat(52_000)}export const zanzibarRetryBudget = 3;\n`;

const TRANSCRIPT: Message[] = [
  {
    type: 'assistant',
    message: {
      content: [
        { type: 'thinking', thinking: 'The flaky upload probably lacks a backoff policy.' },
        { type: 'text', text: 'I will read the upload client first.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'grep -rn quuxHandler src/' } },
      ],
    },
  },
  {
    type: 'assistant',
    message: {
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: 'src/upload.ts:12: export function quuxHandler() {',
          is_error: false,
        },
      ],
    },
  },
  {
    type: 'assistant',
    message: {
      content: [
        { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: 'src/config.ts' } },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: BIG_FILE, is_error: false },
      ],
    },
  },
  text('Retries now wait with exponential backoff between attempts.'),
  runResult('Added jittered exponential backoff.'),
];

describe('GET /api/search', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  let sessionId = '';
  let otherSessionId = '';

  const search = async (query: string, key = owner.apiKey) => {
    const response = await withKey(server, key, 'GET', `/api/search?${query}`);
    return {
      status: response.status,
      body: (await response.json()) as SearchResponse & { error?: { code: string; message: string } },
    };
  };
  const hitsFor = async (q: string) => (await search(`q=${encodeURIComponent(q)}`)).body.hits;

  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
    other = await seedWorkspace(server, 'other');
    sessionId = (
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Make the uploader survive flaky networks.',
        repoUrl: 'https://github.com/acme/uploader',
      })
    ).id;
    otherSessionId = (
      await createSession(server, other.user.cookie, {
        organizationId: other.organizationId,
        initialMessage: 'The quuxHandler of another workspace.',
      })
    ).id;
    await server.storage.write(async (tx) => {
      for (const message of TRANSCRIPT) {
        await tx.sessions.appendMessage(
          sessionId,
          owner.organizationId,
          message,
          null,
          new Date().toISOString(),
        );
      }
    });
    // Indexed in the background: wait for the last message's words.
    await until(
      () => hitsFor('jittered'),
      (hits) => hits.length > 0,
    );
  });
  afterAll(() => server.dispose());

  it('finds words in prompts, answers, thinking, tool inputs, tool outputs and results, at their message', async () => {
    const expectations: Array<[string, number]> = [
      ['flaky networks', 0], // the prompt
      ['backoff policy', 1], // thinking
      ['grep', 1], // a tool's input
      ['export function', 2], // a tool's output
      ['zanzibarRetryBudget', 3], // deep inside a 2 MB tool output
      ['exponential attempts', 4], // an answer
      ['jittered', 5], // the result
    ];
    for (const [q, messageIndex] of expectations) {
      const hits = await hitsFor(q);
      expect(
        hits.map((h) => h.messageIndex),
        q,
      ).toContain(messageIndex);
      const hit = hits.find((h) => h.messageIndex === messageIndex)!;
      expect(hit).toMatchObject({ sessionId, title: 'Make the uploader survive flaky networks' });
      expect(hit.snippet.length).toBeLessThanOrEqual(240);
      expect(hit.highlights.length).toBeGreaterThan(0);
      for (const [start, end] of hit.highlights) {
        const marked = hit.snippet.slice(start, end).toLowerCase();
        expect(
          q
            .toLowerCase()
            .split(' ')
            .some((word) => marked.includes(word.toLowerCase())),
        ).toBe(true);
      }
    }
    // The body validates against the published schema.
    expect(SearchResponseSchema.safeParse((await search('q=grep')).body).success).toBe(true);
  });

  it('matches words in any order and case, phrases as phrases, and prefixes', async () => {
    expect((await hitsFor('BACKOFF exponential')).map((h) => h.messageIndex)).toContain(4);
    expect((await hitsFor('"exponential backoff"')).map((h) => h.messageIndex).sort()).toEqual([4, 5]);
    expect(await hitsFor('"backoff exponential"')).toEqual([]);
    expect((await hitsFor('zanzibarRetry*')).map((h) => h.messageIndex)).toEqual([3]);
    expect(await hitsFor('zanzibarRetry')).toEqual([]);
    // The snippet is cut from the text around the match, not from the message's start.
    const [deep] = await hitsFor('zanzibarRetryBudget');
    expect(deep!.snippet).toMatch(/zanzibarRetryBudget = 3/u);
    expect(deep!.snippet.startsWith('…')).toBe(true);
  });

  it('never runs what a person typed as FTS5 syntax', async () => {
    for (const q of [
      'AND',
      'OR backoff',
      '"unclosed phrase',
      'NEAR(a b)',
      '-backoff',
      'text:backoff',
      'a"b',
    ]) {
      const { status } = await search(`q=${encodeURIComponent(q)}`);
      expect(status, q).toBe(200);
    }
    // Operators are read as the words around them: `-` does not exclude, parentheses do not group.
    expect((await hitsFor('(exponential) -backoff')).map((h) => h.messageIndex).sort()).toEqual([4, 5]);
  });

  it('refuses an empty query and a bad cursor with 400', async () => {
    for (const query of ['q=', 'q=%20%20', 'q=!!!', 'q=(', 'q=*', '']) {
      const { status, body } = await search(query);
      expect(status, query).toBe(400);
      expect(body.error?.code).toBe('validation_failed');
    }
    expect((await search('q=grep&cursor=nope')).status).toBe(400);
    expect((await search('q=grep&limit=0')).status).toBe(400);
    expect((await search('q=grep&limit=101')).status).toBe(400);
  });

  it('keeps to the workspace: other workspaces’ transcripts never show, another organizationId is 403', async () => {
    const hits = await hitsFor('quuxHandler');
    expect(hits.map((h) => h.sessionId)).not.toContain(otherSessionId);
    expect(hits.length).toBeGreaterThan(0);
    expect((await search(`q=quuxHandler&organizationId=${other.organizationId}`)).status).toBe(403);
    const theirs = await until(
      () => search('q=quuxHandler', other.apiKey),
      (r) => r.body.hits.length > 0,
    );
    expect(theirs.body.hits.map((h) => h.sessionId)).toEqual([otherSessionId]);
    // The cookie follows the membership rules of the list.
    const asOwner = await asUser(server, owner.user.cookie, 'GET', '/api/search?q=grep');
    expect(asOwner.status).toBe(200);
    const asStranger = await asUser(
      server,
      other.user.cookie,
      'GET',
      `/api/search?q=grep&organizationId=${owner.organizationId}`,
    );
    expect(asStranger.status).toBe(403);
    expect((await fetch(`${server.url}/api/search?q=grep`)).status).toBe(401);
  });

  it('filters by repository and agent kind', async () => {
    expect((await search('q=backoff&repository=acme/uploader')).body.hits.length).toBeGreaterThan(0);
    expect((await search('q=backoff&repository=ACME')).body.hits.length).toBeGreaterThan(0);
    expect((await search('q=backoff&repository=acme/other')).body.hits).toEqual([]);
    expect((await search('q=backoff&agent=codex')).body.hits).toEqual([]);
    expect((await search('q=backoff&agent=bogus')).status).toBe(400);
  });

  it('pages with nextCursor, best matches first, every hit once', async () => {
    const many = (
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Paging check.',
      })
    ).id;
    await server.storage.write(async (tx) => {
      for (let i = 0; i < 7; i += 1) {
        const words =
          i === 3
            ? 'pagingword pagingword pagingword pagingword'
            : `pagingword number ${i} with more words around it`;
        await tx.sessions.appendMessage(
          many,
          owner.organizationId,
          text(words),
          null,
          new Date().toISOString(),
        );
      }
    });
    await until(
      () => hitsFor('pagingword'),
      (hits) => hits.length === 7,
      5000,
    );
    const seen: number[] = [];
    let cursor: string | undefined;
    let first: SearchResponse | undefined;
    do {
      const { body } = await search(`q=pagingword&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      first ??= body;
      expect(body.hits.length).toBeLessThanOrEqual(3);
      seen.push(...body.hits.map((h) => h.messageIndex));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // The message that says it four times ranks first.
    expect(first!.hits[0]!.messageIndex).toBe(4);
  });

  it('finds a message appended while the server runs within 5 s', async () => {
    const began = Date.now();
    await server.storage.write((tx) =>
      tx.sessions.appendMessage(
        sessionId,
        owner.organizationId,
        text('A late note on xylophones.'),
        null,
        new Date().toISOString(),
      ),
    );
    const hits = await until(
      () => hitsFor('xylophones'),
      (h) => h.length > 0,
      5000,
    );
    expect(hits.map((h) => h.messageIndex)).toEqual([TRANSCRIPT.length + 1]);
    expect(Date.now() - began).toBeLessThan(5000);
  });
});

describe(
  'the search index on disk',
  sqljsOnly("the desktop's index file (search.db); a team server's index is in PostgreSQL"),
  () => {
    it('serves at once after a restart, and is rebuilt from the transcripts when damaged', async () => {
      const dataDir = tempDir();
      let server = await startTestServer({ dataDir });
      const owner = await seedWorkspace(server, 'owner');
      const id = (
        await createSession(server, owner.user.cookie, {
          organizationId: owner.organizationId,
          initialMessage: 'Tune the walrus cache.',
        })
      ).id;
      await server.store.write(() =>
        server.repos.sessions.appendMessage(
          id,
          owner.organizationId,
          text('The walrus cache now evicts by size.'),
          null,
          new Date().toISOString(),
        ),
      );
      const find = async () => {
        const response = await withKey(server, owner.apiKey, 'GET', '/api/search?q=walrus');
        return ((await response.json()) as SearchResponse).hits.map((h) => h.messageIndex).sort();
      };
      expect(await until(find, (hits) => hits.length === 2)).toEqual([0, 1]);
      await server.stop();

      // Restarted: the index is read from disk, with nothing to catch up on.
      server = await startTestServer({ dataDir });
      expect(server.app.hasRoute({ method: 'GET', url: '/api/search' })).toBe(true);
      expect(await find()).toEqual([0, 1]);
      await server.stop();

      const healthy = await runCli(['doctor', '--data-dir', dataDir]);
      expect(healthy.stdout).toMatch(/Search index\s+search\.db quick_check ok, 1 sessions, up to date/u);

      // Damaged: doctor says so (and that nothing is lost); the next start puts it aside and
      // rebuilds it from the transcripts, which stay the only record.
      writeFileSync(join(dataDir, 'search.db'), 'not a database at all, just damage');
      const damaged = await runCli(['doctor', '--data-dir', dataDir]);
      expect(damaged.code).toBe(0);
      expect(damaged.stdout).toMatch(/Search index\s+UNUSABLE: .*\(rebuilt at the next start\)/u);
      expect(damaged.stdout).toMatch(/search\.db cannot be used .* Nothing is lost/u);
      server = await startTestServer({ dataDir });
      expect(await until(find, (hits) => hits.length === 2)).toEqual([0, 1]);
      const keptAside = () => readdirSync(dataDir).filter((name) => name.startsWith('search.db.damaged-'));
      expect(keptAside()).toHaveLength(1);
      await server.stop();

      // Of another format (an older version's): removed, not kept, and rebuilt.
      const old = new DatabaseSync(join(dataDir, 'search.db'));
      old.exec("UPDATE meta SET value = '0' WHERE key = 'format'");
      old.close();
      server = await startTestServer({ dataDir });
      expect(await until(find, (hits) => hits.length === 2)).toEqual([0, 1]);
      expect(keptAside()).toHaveLength(1);
      await server.dispose();
    });
  },
);

describe(
  'a session going on while the index has a backlog',
  sqljsOnly("the desktop's index catching up; a team server indexes each message as it is saved"),
  () => {
    it('is indexed before the backlog', async () => {
      const lines: string[] = [];
      let partial = '';
      const log = new Writable({
        write(chunk: Buffer, _encoding, done) {
          const parts = (partial + chunk.toString()).split('\n');
          partial = parts.pop() ?? '';
          lines.push(...parts);
          done();
        },
      });
      const server = await startTestServer({ log: { level: 'debug', stream: log } });
      try {
        const owner = await seedWorkspace(server, 'owner');
        const search = async (q: string) =>
          SearchResponseSchema.parse(
            await (await withKey(server, owner.apiKey, 'GET', `/api/search?q=${q}&limit=100`)).json(),
          ).hits;
        const live = (
          await createSession(server, owner.user.cookie, {
            organizationId: owner.organizationId,
            initialMessage: 'Keep going on the parser.',
          })
        ).id;
        const append = (id: string, message: Message) =>
          server.repos.sessions.appendMessage(
            id,
            owner.organizationId,
            message,
            null,
            new Date().toISOString(),
          );
        await server.store.write(() => append(live, text('The parser keeps its place.')));
        await until(
          () => search('place'),
          (hits) => hits.length > 0,
        );

        // One write brings a backlog of 30 sessions (an import, say), then a message to the
        // session going on: the index hears of the backlog first.
        const backlog: string[] = [];
        const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(40);
        const upToDate = lines.length;
        await server.store.write(() => {
          for (let n = 0; n < 30; n += 1) {
            const id = `session_backlog${String(n).padStart(4, '0')}`;
            backlog.push(id);
            server.repos.sessions.insert({
              id,
              workspaceId: owner.organizationId,
              authorId: owner.user.userId,
              title: `Backlog ${n}`,
              model: 'claude-sonnet-4-5',
              createdAt: new Date().toISOString(),
              baseBranch: 'main',
              initialMessage: `Backlog ${n}`,
            });
            for (let m = 0; m < 10; m += 1) append(id, text(`${filler} ${n} ${m}`));
            append(id, text('backlogdone'));
          }
          append(live, text('A new turn: zqgoingon.'));
        });
        await until(
          () => search('backlogdone'),
          (hits) => hits.length === 30,
          30_000,
        );
        expect(await search('zqgoingon')).toHaveLength(1);

        // The order the index brought them up to date in, from its log.
        const order = lines
          .slice(upToDate)
          .map((line) => JSON.parse(line) as { msg: string; sessionId?: string })
          .filter((entry) => entry.msg === 'search index: session up to date')
          .map((entry) => entry.sessionId);
        expect(order.indexOf(live)).toBeGreaterThanOrEqual(0);
        for (const id of backlog) expect(order.indexOf(id)).toBeGreaterThan(order.indexOf(live));
      } finally {
        await server.dispose();
      }
    }, 60_000);
  },
);
