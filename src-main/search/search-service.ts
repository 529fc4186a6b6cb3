import { z } from 'zod';
import {
  SEARCH_LIMIT_DEFAULT,
  type SearchHit,
  type SearchIndexing,
  type SearchResponse,
} from '../../src-shared/search.js';
import type { AgentFilter } from '../../src-shared/sessions.js';
import { badRequest } from '../errors.js';
import { readMessageAt, readMessagePage, type TranscriptReads } from '../sessions/transcript-reads.js';
import { messagePiece, pieceAt, PIECE_READ_MIN_BYTES } from './message-piece.js';
import { chunks, searchableText } from './message-text.js';
import { parseQuery } from './query.js';
import type { ParsedQuery } from './query.js';
import type { SearchRow } from './search-index.js';
import type { SearchFilters } from './search-reader.js';
import { makeSnippet } from './snippet.js';
import { termPattern } from '../../src-shared/search-terms.js';
import type { SessionRow } from '../store/session-row.js';
import {
  FRAME_HEADER_BYTES,
  FRAME_OVERHEAD_BYTES,
  MAX_MESSAGE_BYTES,
  onePayload,
  wholeFrameBytes,
} from '../store/transcript-format.js';

export interface SearchInput {
  workspaceId: string;
  q: string;
  agent?: AgentFilter | undefined;
  repository?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * Hits whose messages are read at the same time: on PostgreSQL each read is a round trip or
 * two, and a page of 20 read four at a time took ten of them one after the other.
 */
const HITS_READ_AT_ONCE = 10;

const CursorSchema = z.tuple([z.number().int().min(0)]);

function decodeCursor(cursor: string): number {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')))[0];
  } catch {
    throw badRequest('The cursor is invalid', [
      { path: 'query.cursor', message: 'is not a cursor from nextCursor' },
    ]);
  }
}

const encodeCursor = (offset: number) => Buffer.from(JSON.stringify([offset])).toString('base64url');

/**
 * What the search service asks of an index: the desktop's FTS5 file (search-index.ts) or a
 * team server's PostgreSQL (postgres-search-index.ts).
 */
export interface TranscriptIndex {
  /** Best matches first: the message pieces matching the query in the workspace, a page of them. */
  search(query: ParsedQuery, filters: SearchFilters, offset: number, limit: number): Promise<SearchRow[]>;
  /** Whether every message of the workspace's sessions is in the index. */
  indexing(workspaceId: string): SearchIndexing | Promise<SearchIndexing>;
}

/** Full-text search over a workspace's transcripts: the index finds, the transcripts say. */
export function createSearchService(deps: { index: TranscriptIndex; source: TranscriptReads }) {
  /**
   * The piece of a large message the index says where it starts: its bytes alone are read and
   * decoded (a hit in the last piece of a 4 MB tool output reads some 40 KB of it). Undefined
   * when the index keeps no start for it, or what is read there does not make it.
   */
  async function pieceFromItsStart(row: SearchRow, session: SessionRow): Promise<string | undefined> {
    const { start, offset } = row;
    if (!start || offset === null || offset >= session.transcriptBytes) return undefined;
    try {
      const { bytes, payloadBytes } =
        pieceRead(row, session) ??
        (await deps.source.transcripts.readPayloadRange(
          session.id,
          offset,
          session.transcriptBytes,
          start.at,
          start.until,
        ));
      return pieceAt(bytes, start, row.chunk, start.until === payloadBytes);
    } catch {
      // The whole message is read next, and checked as every read is.
      return undefined;
    }
  }

  /**
   * The piece's bytes as the index read them with the match, when they are all there and the
   * frame's header says its payload holds them (as readPayloadRange checks); else null.
   */
  function pieceRead(row: SearchRow, session: SessionRow): { bytes: Buffer; payloadBytes: number } | null {
    const { start, offset, frame, piece } = row;
    if (!start || offset === null || !frame || !piece || frame.length < FRAME_HEADER_BYTES) return null;
    const payloadBytes = frame.readUInt32LE(0);
    const fits =
      piece.length === start.until - start.at &&
      payloadBytes > 0 &&
      payloadBytes <= MAX_MESSAGE_BYTES &&
      start.until <= payloadBytes &&
      offset + payloadBytes + FRAME_OVERHEAD_BYTES <= session.transcriptBytes;
    return fits ? { bytes: piece, payloadBytes } : null;
  }

  /**
   * The message's payload from the bytes the index read with the match, checked as every read
   * is; null when they do not hold its whole frame (or do not check), and it is read afresh.
   */
  function payloadRead(row: SearchRow, session: SessionRow): Buffer | null {
    if (!row.frame || row.offset === null) return null;
    const frameBytes = wholeFrameBytes(row.frame, row.offset, session.transcriptBytes);
    if (frameBytes === null || frameBytes > row.frame.length) return null;
    try {
      return onePayload(row.frame.subarray(0, frameBytes), row.offset);
    } catch {
      return null;
    }
  }

  /**
   * The piece cut from the whole message, read and checked as every read is. From a large
   * message it is read without parsing the whole of it (bench/search-hits.ts: a whole parse
   * makes strings V8 keeps apart, and costs ms); a small one is parsed whole, which is faster.
   * Where the piece read does not hold the match (see messagePiece), it is cut from the parsed
   * message, as when it was indexed.
   */
  async function pieceFromMessage(
    row: SearchRow,
    session: SessionRow,
    holdsMatch: (piece: string | undefined) => piece is string,
  ): Promise<string | null> {
    const json =
      row.offset === null
        ? (await readMessagePage(deps.source, session, row.messageIndex, 1, Infinity)).messages[0]
        : (payloadRead(row, session) ?? (await readMessageAt(deps.source, session, row.offset)));
    if (!json) return null;
    const piece = json.length > PIECE_READ_MIN_BYTES ? messagePiece(json, row.chunk) : undefined;
    return holdsMatch(piece)
      ? piece
      : (chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown))[row.chunk] ?? '');
  }

  async function hitFor(row: SearchRow, terms: Parameters<typeof makeSnippet>[1]) {
    const session = row.session ?? (await deps.source.storage.repos.sessions.find(row.sessionId));
    if (!session || row.messageIndex >= session.messageCount) return null;
    const holdsMatch = (piece: string | undefined): piece is string =>
      piece !== undefined && termPattern(terms).test(piece);
    const fromStart = await pieceFromItsStart(row, session);
    const text = holdsMatch(fromStart) ? fromStart : await pieceFromMessage(row, session, holdsMatch);
    if (text === null) return null;
    const hit: SearchHit = {
      sessionId: session.id,
      title: session.title,
      createdAt: session.createdAt,
      messageIndex: row.messageIndex,
      ...makeSnippet(text, terms),
    };
    if (session.agentKind !== undefined) hit.agent = session.agentKind;
    return hit;
  }

  return {
    async search(input: SearchInput): Promise<SearchResponse> {
      const parsed = parseQuery(input.q);
      if ('refused' in parsed)
        throw badRequest(parsed.refused, [{ path: 'query.q', message: parsed.detail }]);
      const offset = input.cursor === undefined ? 0 : decodeCursor(input.cursor);
      const limit = input.limit ?? SEARCH_LIMIT_DEFAULT;
      // Read before the search: complete then means the search saw every message.
      const indexing = await deps.index.indexing(input.workspaceId);
      const rows = await deps.index.search(
        parsed,
        { workspaceId: input.workspaceId, agent: input.agent, repository: input.repository },
        offset,
        limit + 1,
      );
      const more = rows.length > limit;
      const seen = new Set<string>();
      // A long message is indexed in pieces: it is one hit, at its best piece.
      const best = rows.slice(0, limit).filter((row) => {
        const key = `${row.sessionId}:${row.messageIndex}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      const found: Array<SearchHit | null> = [];
      for (let i = 0; i < best.length; i += HITS_READ_AT_ONCE) {
        const batch = best.slice(i, i + HITS_READ_AT_ONCE);
        found.push(...(await Promise.all(batch.map((row) => hitFor(row, parsed.terms)))));
      }
      const hits = found.filter((hit): hit is SearchHit => hit !== null);
      return more ? { hits, nextCursor: encodeCursor(offset + limit), indexing } : { hits, indexing };
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
