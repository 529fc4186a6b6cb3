// Search on a team server: the same corpus written to the desktop's sql.js store (FTS5 index) and
// to PostgreSQL (tsvector), the same searches over HTTP, the same hits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchResponseSchema, type SearchHit, type SearchResponse } from '../../src-shared/search.js';
import type { Message } from '../../src-shared/sessions.js';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { systemClock } from '../../src-main/clock.js';
import { CHUNK_CHARS } from '../../src-main/search/message-text.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startTeamApp, type TeamApp } from '../helpers/team-app.js';
import { until } from '../helpers/until.js';
import { assistantText as said, runResult } from '../helpers/messages.js';

const AT = Date.parse('2026-11-20T09:00:00.000Z');
const at = (i: number) => new Date(AT + i * 1000).toISOString();
const toolOutput = (id: string, content: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'tool_result', tool_use_id: id, content, is_error: false }] },
});

/**
 * A tool output of about 300 KB, cut into some ten pieces: one rare word just past the first
 * piece's end, a phrase across that edge, and another rare word near the end.
 */
function bigOutput(): string {
  const line = 'const filler = "nothing to see here";\n';
  const head = line.repeat(Math.floor((CHUNK_CHARS - 40) / line.length));
  const tail = line.repeat(7_000);
  return `${head}glacier summit ridge kilimanjaro ${'ascent '.repeat(20)}\n${tail}export const zanzibarRetryBudget = 3;\n`;
}

interface Corpus {
  keyA: string;
  keyB: string;
  workspaceA: string;
}

/** The same sessions and messages, through the storage either database offers. */
async function seedCorpus(storage: Storage): Promise<Corpus> {
  const accounts = createAccounts(storage, systemClock);
  await accounts.createUser({ email: 'ada@desk.test', name: 'Ada', password: 'correct horse battery' });
  await accounts.createUser({ email: 'bob@desk.test', name: 'Bob', password: 'correct horse battery' });
  const a = await accounts.createWorkspace({ name: 'A', ownerEmail: 'ada@desk.test' });
  const b = await accounts.createWorkspace({ name: 'B', ownerEmail: 'bob@desk.test' });
  const keyA = (await accounts.createKey({ organizationId: a.organizationId })).key;
  const keyB = (await accounts.createKey({ organizationId: b.organizationId })).key;
  const ada = await storage.repos.users.findByEmail('ada@desk.test');
  const bob = await storage.repos.users.findByEmail('bob@desk.test');
  let clock = 0;
  const session = async (
    id: string,
    owner: { workspaceId: string; authorId: string },
    first: string,
    messages: Message[],
    facts: { agent?: 'codex' | 'claude-code'; repository?: string } = {},
  ) => {
    await storage.write(async (tx) => {
      await tx.sessions.insert({
        id,
        ...owner,
        title: first.slice(0, 40),
        model: 'm',
        createdAt: at((clock += 1)),
        baseBranch: 'main',
        initialMessage: first,
        ...(facts.repository
          ? { repository: facts.repository, repoUrl: `https://github.com/${facts.repository}` }
          : {}),
      });
      if (facts.agent) await tx.sessions.setAgentKind(id, facts.agent);
    });
    for (const message of messages) {
      await storage.write((tx) =>
        tx.sessions.appendMessage(id, owner.workspaceId, message, null, at((clock += 1))),
      );
    }
  };
  const inA = { workspaceId: a.organizationId, authorId: ada!.id };
  const inB = { workspaceId: b.organizationId, authorId: bob!.id };

  await session(
    'ses_upload',
    inA,
    'Fix the flaky upload test, please',
    [
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'thinking', thinking: 'The flaky upload probably lacks a backoff policy.' },
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'Bash',
              input: { command: 'grep -rn quuxHandler src/' },
            },
          ],
        },
      },
      toolOutput('toolu_1', 'src/upload.ts:12: export function quuxHandler() { return retry_budget_ms; }'),
      said('Retries now wait with exponential backoff between attempts.'),
      runResult('Added jittered exponential backoff.'),
    ],
    { agent: 'codex', repository: 'Acme/Widgets' },
  );
  await session(
    'ses_big',
    inA,
    'Read the whole config file',
    [toolOutput('toolu_2', bigOutput()), said('Done.')],
    {
      agent: 'claude-code',
      repository: 'acme/gadgets',
    },
  );
  await session('ses_cafe', inA, 'Une question', [said('Un café au lait dans la façade naïve, réessayez.')], {
    repository: 'other/things',
  });
  // A word more than 256 times in one piece, then a phrase with it: PostgreSQL keeps 256
  // positions of a word, so only its pair of words finds the phrase there.
  await session('ses_many', inA, 'Count to many', [said(`${'alpha '.repeat(300)}alpha omega`)]);
  for (let i = 0; i < 30; i += 1) {
    await session(`ses_retry_${String(i).padStart(2, '0')}`, inA, `Retry number ${i}`, [
      said(`The retry ${'worked '.repeat(i % 5)}after backoff ${i}.`),
      said(i % 3 === 0 ? 'Exponential growth, then a backoff.' : 'Nothing else to report.'),
    ]);
  }
  // Another workspace with every rare word: never found from workspace A.
  await session('ses_elsewhere', inB, 'The flaky upload again', [
    said('kilimanjaro zanzibarRetryBudget quuxHandler src/upload.ts exponential backoff café'),
  ]);
  return { keyA, keyB, workspaceA: a.organizationId };
}

/** Every hit of a search, page after page, by session and message. */
async function searchAll(
  url: string,
  key: string,
  query: string,
): Promise<{ hits: Map<string, SearchHit>; indexing: SearchResponse['indexing']; status: number }> {
  const hits = new Map<string, SearchHit>();
  let cursor: string | undefined;
  let indexing: SearchResponse['indexing'] = { complete: false, pendingSessions: -1 };
  for (let page = 0; page < 50; page += 1) {
    const response = await fetch(
      `${url}/api/search?${query}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { headers: { 'x-api-key': key } },
    );
    if (response.status !== 200) return { hits, indexing, status: response.status };
    const body = SearchResponseSchema.parse(await response.json());
    indexing = body.indexing;
    // A message in pieces is one hit a page: across pages, its best piece is kept.
    for (const hit of body.hits) {
      const id = `${hit.sessionId}#${hit.messageIndex}`;
      if (!hits.has(id)) hits.set(id, hit);
    }
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  return { hits, indexing, status: 200 };
}

const SEARCHES: Array<{ q: string; agent?: string; repository?: string; expect: number | 'some' }> = [
  { q: 'flaky', expect: 2 },
  { q: 'UPLOAD Flaky', expect: 2 },
  { q: '"exponential backoff"', expect: 2 },
  { q: '"backoff exponential"', expect: 0 },
  { q: 'quux*', expect: 2 },
  { q: 'quuxHandler', expect: 2 },
  { q: 'handler', expect: 0 },
  { q: 'upload.ts', expect: 1 },
  { q: 'src/upload.ts', expect: 1 },
  { q: 'upload', expect: 3 },
  { q: 'retry_budget_ms', expect: 1 },
  { q: 'budget', expect: 1 },
  { q: 'kilimanjaro', expect: 1 },
  { q: '"summit ridge kilimanjaro"', expect: 1 },
  { q: '"alpha omega"', expect: 1 },
  { q: 'zanzibarRetryBudget', expect: 1 },
  { q: 'zanzib*', expect: 1 },
  { q: 'nothing see', expect: 1 },
  { q: 'cafe', expect: 1 },
  { q: 'café naive', expect: 1 },
  { q: 'retry', expect: 'some' },
  { q: 'backoff', expect: 'some' },
  { q: 'backoff exponential', expect: 'some' },
  { q: 'retry', agent: 'codex', expect: 1 },
  { q: 'backoff', agent: 'codex', expect: 3 },
  { q: 'backoff', repository: 'acme', expect: 3 },
  { q: 'backoff', repository: 'acme/widgets', expect: 3 },
  { q: 'nothing', repository: 'acme/widgets', expect: 0 },
  { q: 'nothing', repository: 'https://github.com/acme/gadgets', expect: 1 },
  { q: 'nonexistentword', expect: 0 },
];

describe.each([
  { statistics: false, what: 'as on the desktop' },
  // With them, searches for words in many pieces walk the pieces from the newest.
  { statistics: true, what: "as on the desktop, with the planner's statistics of the index" },
])(
  'search on a team server answers $what',
  { ...requireTools(postgresTool()), timeout: 120_000 },
  ({ statistics }) => {
    const pg = usePostgres();
    let desktop: TestServer;
    let team: TeamApp;
    let onDesktop: Corpus;
    let onTeam: Corpus;

    beforeAll(async () => {
      desktop = await startTestServer();
      team = await startTeamApp(pg.url());
      onDesktop = await seedCorpus(storageOf(desktop.store));
      onTeam = await seedCorpus(team.storage);
      if (statistics) await team.sql`ANALYZE search_pieces`;
      // The desktop indexes in the background; the team server in each append's transaction.
      await until(
        () => searchAll(desktop.url, onDesktop.keyA, `organizationId=${onDesktop.workspaceA}&q=flaky`),
        (r) => r.indexing.complete,
        30_000,
      );
    }, 120_000);
    afterAll(async () => {
      await team?.close();
      await desktop?.dispose();
    });

    it.each(SEARCHES)(
      'finds the same messages for $q (agent $agent, repository $repository)',
      async (search) => {
        const params = (corpus: Corpus) => {
          const p = new URLSearchParams({ organizationId: corpus.workspaceA, q: search.q });
          if (search.agent) p.set('agent', search.agent);
          if (search.repository) p.set('repository', search.repository);
          return p.toString();
        };
        const [lite, post] = await Promise.all([
          searchAll(desktop.url, onDesktop.keyA, params(onDesktop)),
          searchAll(team.url, onTeam.keyA, params(onTeam)),
        ]);
        expect(post.status).toBe(200);
        expect(lite.status).toBe(200);
        expect(post.indexing).toEqual({ complete: true, pendingSessions: 0 });
        const found = (r: typeof lite) => [...r.hits.keys()].sort();
        expect(found(post)).toEqual(found(lite));
        if (search.expect === 'some') expect(post.hits.size).toBeGreaterThan(3);
        else expect(post.hits.size).toBe(search.expect);
        // The snippet is cut from the same piece of the same message when only one piece matches.
        for (const [id, hit] of post.hits) {
          if (!id.startsWith('ses_big')) expect(hit).toEqual(lite.hits.get(id));
          expect(hit.sessionId).not.toBe('ses_elsewhere');
        }
      },
    );

    it("finds another workspace's messages only with that workspace's key", async () => {
      const mine = await searchAll(
        team.url,
        onTeam.keyA,
        `organizationId=${onTeam.workspaceA}&q=kilimanjaro`,
      );
      expect([...mine.hits.values()].map((h) => h.sessionId)).toEqual(['ses_big']);
      // Workspace A's key asking for workspace B is refused; B's own key finds B's session alone.
      const workspaceB = (await team.storage.repos.sessions.find('ses_elsewhere'))!.workspaceId;
      const refused = await searchAll(team.url, onTeam.keyA, `organizationId=${workspaceB}&q=kilimanjaro`);
      expect(refused.status).toBe(403);
      const theirs = await searchAll(team.url, onTeam.keyB, `organizationId=${workspaceB}&q=kilimanjaro`);
      expect([...theirs.hits.values()].map((h) => h.sessionId)).toEqual(['ses_elsewhere']);
    });

    it('cuts the snippet of a large message from the piece that matched, read from where it starts', async () => {
      const { hits } = await searchAll(
        team.url,
        onTeam.keyA,
        `organizationId=${onTeam.workspaceA}&q=zanzibarRetryBudget`,
      );
      const hit = hits.get('ses_big#1');
      expect(hit?.snippet).toContain('export const zanzibarRetryBudget = 3;');
      expect(hit?.highlights).toHaveLength(1);
      const [[from, to]] = hit!.highlights as [[number, number]];
      expect(hit!.snippet.slice(from, to)).toBe('zanzibarRetryBudget');
    });
  },
);
