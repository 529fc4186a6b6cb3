import type { Message } from '../../src-shared/sessions.js';
import { MAX_MESSAGE_BYTES } from '../store/transcript-format.js';
import {
  describeIssues,
  EXPORT_TYPE,
  ExportHeaderSchema,
  ExportSessionSchema,
  READABLE_VERSIONS,
  type ExportFormat,
  type ExportHeader,
  type SessionHead,
} from './format.js';
import type { LineTooLong } from './lines.js';
import { MAX_LINE_BYTES } from './lines.js';

/**
 * What an import reads, whatever the export's format: the sessions and messages, the checks of
 * one session given whole, and the batches its messages are written in.
 */

/** The input is not an export at all (or one this version cannot read): nothing was imported. */
export class ImportInputError extends Error {}

/** A JSON export is read whole; beyond this, NDJSON (read line by line) is the way. */
export const JSON_DOCUMENT_MAX_CHARS = 128 * 2 ** 20;
/** Messages handed to the store in one write: bounded, so a huge session is written in parts. */
export const BATCH_BYTES = 2 ** 20;
export const BATCH_MESSAGES = 4096;

/** Who sent a message: a person by email, the session's author (version 1 without meta), or nobody. */
export type Sender = { email: string } | 'session-author' | null;

export interface ImportedMessage {
  /** The body as it came (validated), unknown extra fields included. */
  body: Message;
  createdAt: string;
  sender: Sender;
}

/** A session read and checked whole, with its messages ready to be written in batches. */
export interface ImportedSession {
  head: Omit<SessionHead, 'messageCount'>;
  messageCount: number;
  /** Batches of messages from message `from` (counted from 0) on, in order. */
  batches(from: number): AsyncGenerator<ImportedMessage[]>;
  /** Whether all of it fits one write. */
  small: boolean;
  discard(): Promise<void>;
}

export type Entry =
  | { kind: 'session'; at: string; order: number; session: ImportedSession }
  /** Something that could not be imported, where (`line 5`, `session 3`) and why. */
  | { kind: 'skip'; at: string; order: number; reason: string; isSession: boolean };

export interface Input {
  format: ExportFormat;
  header: ExportHeader;
  entries: AsyncGenerator<Entry>;
  /** Version 2: whether the `end` line was read (known once `entries` is done). */
  ended(): boolean | null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseHeader(value: unknown): ExportHeader {
  const readable: readonly unknown[] = READABLE_VERSIONS;
  if (isObject(value) && value.type === EXPORT_TYPE && !readable.includes(value.version)) {
    throw new ImportInputError(
      `The export is in format version ${JSON.stringify(value.version)}; this Session Desk reads versions ` +
        `${READABLE_VERSIONS.join(' and ')}. Update Session Desk to import it.`,
    );
  }
  const header = ExportHeaderSchema.safeParse(value);
  if (!header.success) {
    throw new ImportInputError(
      `The input is not a Session Desk export: its header is invalid (${describeIssues(header.error)}).`,
    );
  }
  return header.data;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.message : String(err) };
  }
}

export function tooLong(line: LineTooLong): ImportInputError {
  return new ImportInputError(
    `The input is not a Session Desk export it can read: it has a line of ${line.bytes} bytes, over the ` +
      `${MAX_LINE_BYTES / 2 ** 20} MiB limit.`,
  );
}

export function messageTooLarge(body: unknown): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
  return bytes > MAX_MESSAGE_BYTES
    ? `is ${bytes} bytes as JSON; the largest a session stores is ${MAX_MESSAGE_BYTES} bytes (16 MiB)`
    : null;
}

/** Groups messages into batches bounded in bytes and in count. */
export async function* inBatches(messages: AsyncIterable<{ message: ImportedMessage; bytes: number }>) {
  let batch: ImportedMessage[] = [];
  let bytes = 0;
  for await (const item of messages) {
    if (batch.length > 0 && (bytes + item.bytes > BATCH_BYTES || batch.length >= BATCH_MESSAGES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item.message);
    bytes += item.bytes;
  }
  if (batch.length > 0) yield batch;
}

/** A whole session object (version 1 line, JSON entry), checked, with its messages in memory. */
export function wholeSession(
  value: unknown,
): { ok: true; session: ImportedSession } | { ok: false; why: string } {
  const parsed = ExportSessionSchema.safeParse(value);
  if (!parsed.success) return { ok: false, why: describeIssues(parsed.error) };
  const { messages: _checked, messageMeta, ...head } = parsed.data;
  // Message bodies are kept as they came (validated above), unknown extra fields included.
  const bodies = (value as { messages: Message[] }).messages;
  for (const [i, body] of bodies.entries()) {
    const large = messageTooLarge(body);
    if (large !== null) return { ok: false, why: `messages.${i} ${large}` };
  }
  const messages = bodies.map((body, i): ImportedMessage => {
    const meta = messageMeta?.[i];
    const sender: Sender =
      meta === undefined
        ? body.type === 'user'
          ? 'session-author'
          : null
        : meta.authorEmail === undefined || body.type !== 'user'
          ? null
          : { email: meta.authorEmail.toLowerCase() };
    return { body, createdAt: meta?.createdAt ?? head.createdAt, sender };
  });
  return {
    ok: true,
    session: {
      head,
      messageCount: messages.length,
      small: true,
      async *batches(from) {
        if (from < messages.length) yield messages.slice(from);
      },
      discard: () => Promise.resolve(),
    },
  };
}

export interface NumberedLine {
  lineNo: number;
  text: string | LineTooLong;
}
