import type { SessionRow } from '../store/session-row.js';
import type { Repos, Storage } from '../store/storage.js';
import { TRANSCRIPT_MAGIC } from '../store/transcript-format.js';
import type { TranscriptSource } from '../store/transcript-source.js';

/** What reading a session's messages takes: its row and marks, and its transcript. */
export interface TranscriptReads {
  storage: Storage;
  transcripts: TranscriptSource;
}

const COMMA = Buffer.from(',');

/**
 * A session's row (and whatever else `also` reads with it, at the same instant) once every
 * byte it counts is in its transcript file, so the row and the bytes read up to its length
 * agree even while an agent keeps appending.
 */
export function settledRow(source: TranscriptReads, sessionId: string): Promise<SessionRow | null>;
export function settledRow<T>(
  source: TranscriptReads,
  sessionId: string,
  also: (row: SessionRow, repos: Repos) => T | Promise<T>,
): Promise<{ row: SessionRow; also: T } | null>;
export function settledRow<T>(
  source: TranscriptReads,
  sessionId: string,
  also?: (row: SessionRow, repos: Repos) => T | Promise<T>,
): Promise<SessionRow | { row: SessionRow; also: T } | null> {
  return source.transcripts.settled(sessionId, async (repos) => {
    const row = await repos.sessions.find(sessionId);
    if (!row || !also) return row;
    return { row, also: await also(row, repos) };
  });
}

/**
 * Every message of a session as JSON, separated by commas (what goes between the brackets of
 * `messages`), read from the transcript up to `row.transcriptBytes` in pieces: nothing is
 * parsed, and a huge message is never held whole.
 */
export async function* messagesJson(source: TranscriptReads, row: SessionRow): AsyncGenerator<Buffer> {
  for await (const piece of source.transcripts.readPayloads(
    row.id,
    TRANSCRIPT_MAGIC.length,
    row.transcriptBytes,
  )) {
    if (piece.first && piece.index > 0) yield COMMA;
    yield piece.bytes;
  }
}

export interface MessagePage {
  /** Each message's JSON, whole. */
  messages: Buffer[];
  createdAtMs: number[];
  /** Where each message's frame starts in the transcript file. */
  offsets: number[];
  /** Messages skipped plus those returned: where the next page starts. */
  next: number;
}

/**
 * Messages after the first `after`, at most `limit` of them and about `maxBytes` (a page
 * always holds at least one message, so one that is larger still comes through whole).
 * The read starts at the nearest mark and skips forward, never at the file's start.
 */
export async function readMessagePage(
  source: TranscriptReads,
  row: SessionRow,
  after: number,
  limit: number,
  maxBytes: number,
): Promise<MessagePage> {
  const page: MessagePage = { messages: [], createdAtMs: [], offsets: [], next: after };
  if (after >= row.messageCount || limit <= 0) return page;
  const mark = await source.storage.repos.sessions.markAtOrBefore(row.id, after + 1);
  if (!mark) throw new Error(`session ${row.id} has no mark before message ${after + 1}`);
  let bytes = 0;
  let pieces: Buffer[] = [];
  const reading = source.transcripts.readPayloads(row.id, mark.offset, row.transcriptBytes);
  for await (const piece of reading) {
    // Frames before the page are read only as far as their headers matter: skipped.
    if (mark.seq + piece.index <= after) continue;
    if (piece.first) pieces = [];
    pieces.push(piece.bytes);
    if (!piece.end) continue;
    const message = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    page.messages.push(message);
    page.createdAtMs.push(piece.createdAtMs);
    page.offsets.push(piece.frameStart);
    page.next += 1;
    bytes += message.length;
    if (page.messages.length >= limit || bytes >= maxBytes) break;
  }
  return page;
}

/** One message, read from where its frame starts (an offset `readMessagePage` gave). */
export async function readMessageAt(
  source: TranscriptReads,
  row: SessionRow,
  offset: number,
): Promise<Buffer | null> {
  if (offset < TRANSCRIPT_MAGIC.length || offset >= row.transcriptBytes) return null;
  return source.transcripts.readFrame(row.id, offset, row.transcriptBytes);
}

/** Every message of a session, parsed: for checks and tools, never for serving. */
export async function readAllMessages(source: TranscriptReads, sessionId: string): Promise<unknown[]> {
  const row = await settledRow(source, sessionId);
  if (!row) return [];
  const page = await readMessagePage(source, row, 0, row.messageCount, Infinity);
  return page.messages.map((m) => JSON.parse(m.toString('utf8')) as unknown);
}
