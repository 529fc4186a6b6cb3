import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { SearchResponseSchema, type SearchHit } from '../../src-shared/search.js';
import { searchTerms } from '../../src-shared/search-terms.js';
import type { Message } from '../../src-shared/sessions.js';
import { chunks, searchableText } from '../../src-main/search/message-text.js';
import { makeSnippet } from '../../src-main/search/snippet.js';
import { runCli } from '../helpers/cli.js';
import { assistantText } from '../helpers/messages.js';
import { captureLog } from '../helpers/search-writer.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

/**
 * A tool output of about 3 MB, as a test run's log or a file read whole: lines of code with
 * quotes, backslashes and characters of two, three and four bytes, and rare words planted at
 * its start, deep inside and at its very end; another rare word in the text after it.
 */
function bigOutput(): Message {
  const lines: string[] = [];
  let chars = 0;
  for (let i = 0; chars < 3_000_000; i += 1) {
    if (i === 3) lines.push('// the first lines name quillwort before anything else');
    if (i === 30_000) lines.push('const budget = "the retry budget is marrowfat for the late stage";');
    const line = `  line ${i}: const value${i} = "C:\\\\temp\\\\file ${i}.ts" + 'é ${i % 7} 日本 😀' /* \t tab */;`;
    lines.push(line);
    chars += line.length + 1;
  }
  lines.push('ok 4512 tests passed, ending with zephyrine');
  return {
    type: 'assistant',
    message: {
      content: [
        { type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: 'npm test' } },
        { type: 'tool_result', tool_use_id: 'toolu_big', content: lines.join('\n'), is_error: false },
        { type: 'text', text: 'Every test passed; the halcyonic run took long.' },
      ],
    },
  };
}

/** The snippet of `word` as the index cut the message: its piece from the parsed message. */
function expectedSnippet(
  message: Message,
  word: string,
): { piece: number } & Pick<SearchHit, 'snippet' | 'highlights'> {
  const pieces = chunks(searchableText(message));
  const piece = pieces.findIndex((text) => text.includes(word));
  return { piece, ...makeSnippet(pieces[piece] as string, searchTerms(word)) };
}

/** Asks GET /api/search of `server` with the workspace's key. */
async function search(server: TestServer, apiKey: string, q: string) {
  return SearchResponseSchema.parse(
    await (await withKey(server, apiKey, 'GET', `/api/search?q=${q}`)).json(),
  );
}

/** A session whose second message is `bigOutput()` (and a short third), once it is indexed. */
async function sessionWithBigOutput(server: TestServer) {
  const owner = await seedWorkspace(server, 'owner');
  const id = (
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Run the tests and say how long they took.',
    })
  ).id;
  const message = bigOutput();
  await server.store.write(() => {
    for (const sent of [message, assistantText('All done.')])
      server.repos.sessions.appendMessage(id, owner.organizationId, sent, null, new Date().toISOString());
  });
  await until(
    () => search(server, owner.apiKey, 'halcyonic'),
    (answer) => answer.indexing.complete && answer.hits.length === 1,
  );
  return { owner, id, message };
}

/** How many piece starts the index in `dataDir` keeps. */
function pieceStartsKept(dataDir: string): number {
  const index = new DatabaseSync(join(dataDir, 'search.db'), { readOnly: true });
  try {
    return Number(index.prepare('SELECT count(*) AS n FROM pieces').get()?.n);
  } finally {
    index.close();
  }
}

describe('a search hit in a large message', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.dispose();
    server = null;
  });

  it('shows the snippet of its piece, wherever the piece is in a multi-megabyte tool output', async () => {
    server = await startTestServer();
    const { owner, id, message } = await sessionWithBigOutput(server);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeGreaterThan(3_000_000);

    const lastPiece = chunks(searchableText(message)).length - 1;
    const cases = [
      { word: 'quillwort', context: 'the first lines name quillwort before anything else', piece: 0 },
      { word: 'marrowfat', context: 'the retry budget is marrowfat for the late stage', piece: 'late' },
      { word: 'zephyrine', context: 'ok 4512 tests passed, ending with zephyrine', piece: lastPiece },
      { word: 'halcyonic', context: 'Every test passed; the halcyonic run took long.', piece: lastPiece },
    ] as const;
    for (const { word, context, piece } of cases) {
      const expected = expectedSnippet(message, word);
      if (piece === 'late') expect(expected.piece).toBeGreaterThan(40);
      else expect(expected.piece).toBe(piece);
      const { hits } = await search(server, owner.apiKey, word);
      expect(hits, word).toHaveLength(1);
      const hit = hits[0] as SearchHit;
      expect(hit).toMatchObject({ sessionId: id, messageIndex: 1 });
      expect(hit.snippet, word).toContain(context);
      expect(
        hit.highlights.map(([from, to]) => hit.snippet.slice(from, to)),
        word,
      ).toEqual([word]);
      // The very snippet the piece cut from the parsed message gives.
      expect({ snippet: hit.snippet, highlights: hit.highlights }, word).toEqual({
        snippet: expected.snippet,
        highlights: expected.highlights,
      });
    }
    // The index keeps where every piece of the message starts.
    expect(pieceStartsKept(server.store.dataDir)).toBe(lastPiece + 1);
  }, 60_000);
});

describe('a search index of the format before piece starts were kept', () => {
  it('is rebuilt at the next start, and answers from the transcripts again', async () => {
    const dataDir = tempDir();
    let server = await startTestServer({ dataDir });
    try {
      const { owner, id, message } = await sessionWithBigOutput(server);
      await server.stop();

      // The index as the version before wrote it: format 6, no piece starts, and (to tell
      // whether it is still what answers) a word no transcript holds, indexed in a piece of
      // the last message.
      const old = new DatabaseSync(join(dataDir, 'search.db'));
      old.exec("UPDATE meta SET value = '6' WHERE key = 'format'; DROP TABLE IF EXISTS pieces");
      const session = old.prepare('SELECT sk FROM sessions WHERE id = ?').get(id);
      old
        .prepare('INSERT INTO body (rowid, text) VALUES (?, ?)')
        .run(Number(session?.sk) * 2 ** 32 + 2 * 512 + 3, 'wraithlike');
      old.close();
      const doctor = await runCli(['doctor', '--data-dir', dataDir]);

      const log = captureLog();
      server = await startTestServer({ dataDir, log: { level: 'info', stream: log.stream } });
      const started = server;
      const rebuilt = await until(
        () => search(started, owner.apiKey, 'marrowfat'),
        (answer) => answer.indexing.complete && answer.hits.length === 1,
        30_000,
      );
      expect(rebuilt.hits[0]?.snippet).toContain('the retry budget is marrowfat for the late stage');
      // The old index answers no more: a word it held and no transcript does is not found.
      expect((await search(started, owner.apiKey, 'wraithlike')).hits).toEqual([]);
      expect(log.text()).toContain('The search index is of format 6, not 7; rebuilding it.');
      // Told apart from a sound index before it was rebuilt, too.
      expect(doctor.stdout).toMatch(
        /Search index\s+UNUSABLE: it is of format 6, not 7 \(rebuilt at the next start\)/u,
      );
      expect(pieceStartsKept(dataDir)).toBe(chunks(searchableText(message)).length);
    } finally {
      await server.dispose();
    }
  }, 90_000);
});
