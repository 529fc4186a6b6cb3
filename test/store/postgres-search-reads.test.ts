// What a search on PostgreSQL reads with each match: the bytes its hit is made of, from the rows
// of transcript_chunks, so that the hit needs no read of its own. A real PostgreSQL, the team
// server's repositories and index, one large message whose pieces cross its rows' edges.
import { describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { systemClock } from '../../src-main/clock.js';
import { messagePieces, type PieceStart } from '../../src-main/search/message-piece.js';
import { indexMessage, piecesQueryOf } from '../../src-main/search/postgres-text.js';
import { parseQuery } from '../../src-main/search/query.js';
import { postgresSearch } from '../../src-main/store-postgres/search.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import { FRAME_HEADER_BYTES } from '../../src-main/store/transcript-format.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import type { Message } from '../../src-shared/sessions.js';

const toolOutput = (id: string, content: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'tool_result', tool_use_id: id, content, is_error: false }] },
});

describe('the bytes a PostgreSQL search reads with its matches', requireTools(postgresTool()), () => {
  const pg = useMigratedPool();

  it('reads a piece of a large message whole where it goes on into the next row', async () => {
    const sql = await pg.open();
    const storage = createPostgresStorage(sql, { indexer: indexMessage });
    const accounts = createAccounts(storage, systemClock);
    await accounts.createUser({ email: 'ada@desk.test', name: 'Ada', password: 'correct horse battery' });
    const { organizationId } = await accounts.createWorkspace({ name: 'A', ownerEmail: 'ada@desk.test' });
    const ada = await storage.repos.users.findByEmail('ada@desk.test');
    // A log of about 800 KB, a word of its own on every line: every piece holds words no
    // other piece does.
    const log = Array.from({ length: 27_000 }, (_, i) => `step w${i}x passed in ${i % 97} ms`).join('\n');
    const message = toolOutput('toolu_1', log);
    await storage.write(async (tx) => {
      await tx.sessions.insert({
        id: 'ses_log',
        workspaceId: organizationId,
        authorId: ada!.id,
        title: 'The build log',
        model: 'm',
        createdAt: new Date().toISOString(),
        baseBranch: 'main',
        initialMessage: 'Run the build',
      });
    });
    await storage.write((tx) =>
      tx.sessions.appendMessage('ses_log', organizationId, message, null, new Date().toISOString()),
    );

    // The pieces that cross an edge between two of the message's rows.
    const [frame] = await sql<Array<{ frame_offset: string }>>`
      SELECT frame_offset FROM search_pieces WHERE session_id = 'ses_log' AND message_index = 1 LIMIT 1`;
    const payloadAt = Number(frame!.frame_offset) + FRAME_HEADER_BYTES;
    const rows = await sql<Array<{ start_offset: string }>>`
      SELECT start_offset FROM transcript_chunks WHERE session_id = 'ses_log' ORDER BY start_offset`;
    const edges = rows.map((r) => Number(r.start_offset)).filter((at) => at > payloadAt);
    expect(edges.length).toBeGreaterThanOrEqual(2);
    const { pieces, starts } = messagePieces(Buffer.from(JSON.stringify(message)))!;
    const crossing = starts.flatMap((start, n) =>
      start && edges.some((edge) => payloadAt + start.at < edge && edge < payloadAt + start.until)
        ? [{ n, start }]
        : [],
    );
    expect(crossing.length).toBeGreaterThan(0);

    const search = postgresSearch(sql);
    for (const { n, start } of crossing) {
      // A word of that piece, found in no other.
      const word = /w\d+x/u.exec(pieces[n]!.slice(CUT_SLACK))![0];
      const parsed = parseQuery(word);
      if ('refused' in parsed) throw new Error(parsed.refused);
      const query = piecesQueryOf(parsed.terms)!;
      const found = await search.find(
        { ...query, workspaceId: organizationId },
        { offset: 0, limit: 5, rankedMax: 200, sortedMax: 20_000, common: false },
      );
      expect(
        found.map((row) => row.chunk),
        word,
      ).toEqual([n]);
      const [row] = found;
      const read = row!.start as PieceStart;
      expect(read).toEqual(start);
      // The piece's bytes whole, as the message holds them: none to read afresh.
      expect(row!.piece?.length).toBe(start.until - start.at);
      expect(row!.piece).toEqual(Buffer.from(JSON.stringify(message)).subarray(start.at, start.until));
    }
  });
});

/** Characters past a piece's start: a word there is whole, not cut by the piece before. */
const CUT_SLACK = 40;
