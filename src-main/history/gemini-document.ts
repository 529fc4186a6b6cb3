import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/** Bytes of records per batch, as the line reader's (file-reader.ts). */
const BATCH_BYTES = 4 << 20;
/** A chat document is read whole: one larger than this is left out, saying so. */
export const DOCUMENT_MAX_BYTES = 256 << 20;

/** Where an earlier read of a chat document stopped: its `offset` counts messages, not bytes. */
interface DocumentProgress {
  offset: number;
  fingerprint: string;
}

/**
 * Gemini CLI's older chat file, `tmp/<project>/chats/session-*.json` (the CLI wrote it until its
 * chat files became JSONL; the recordings in test/fixtures/history/gemini/0.19.1 are of 0.19.1):
 * one JSON document `{ sessionId, projectHash, startTime, lastUpdated, messages, summary? }`,
 * rewritten whole at every change, whose messages have the shapes of the JSONL file's records.
 * It is read whole and handed to the same parser as lines: the header first, the messages from
 * where the last read stopped, then the header's updates (`lastUpdated`, `summary`) as a `$set`
 * line. A file's progress counts messages; the last message read is read again when it is the
 * model's, since the CLI rewrites it as its tool calls complete (the parser shows only what is
 * new in it). A document that does not parse is being rewritten: it is read at the next scan,
 * unless it has not changed for a while, when its lines are read as they are (as notices).
 */
export interface ChatDocument {
  /** The conversation's identity: another conversation in the same file is read from the start. */
  fingerprint: string;
  /** The message to read from, after an earlier read. */
  resumeAt(last: DocumentProgress | undefined): number;
  /** The lines for the parser, from message `from`, in batches; `end` is the next message. */
  batches(from: number): AsyncGenerator<{ lines: string[]; end: number }>;
}

type Message = Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The whole of an open file of `size` bytes, as UTF-8 (invalid bytes become U+FFFD). */
async function readWhole(handle: FileHandle, size: number): Promise<string> {
  const buffer = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await handle.read(buffer, at, size - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return buffer.subarray(0, at).toString('utf8');
}

/** The document in an open file, or null while it does not parse and may still be being written. */
export async function readChatDocument(
  handle: FileHandle,
  size: number,
  settled: boolean,
): Promise<ChatDocument | null> {
  if (size > DOCUMENT_MAX_BYTES) {
    if (!settled) return null;
    const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    const text = `A chat file of ${mib(size)} was left out: chat files are read up to ${mib(DOCUMENT_MAX_BYTES)}.`;
    return document(createHash('sha256').update(text).digest('hex').slice(0, 32), [text], [], []);
  }
  const text = await readWhole(handle, size);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed) || !Array.isArray(parsed.messages)) {
    if (!settled) return null;
    // Not a chat document, for good: its lines, which the parser keeps as notices.
    const lines = text.split('\n');
    return document(createHash('sha256').update(text).digest('hex').slice(0, 32), lines, [], []);
  }
  const { messages, ...header } = parsed;
  const identity = `${String(header.sessionId)} ${String(header.startTime)}`;
  const opening = JSON.stringify({
    sessionId: header.sessionId,
    projectHash: header.projectHash,
    startTime: header.startTime,
  });
  const updates: Record<string, unknown> = {};
  if (header.lastUpdated !== undefined) updates.lastUpdated = header.lastUpdated;
  if (header.summary !== undefined) updates.summary = header.summary;
  return document(
    createHash('sha256').update(identity).digest('hex').slice(0, 32),
    messages.map((message) => JSON.stringify(message)),
    [opening],
    Object.keys(updates).length > 0 ? [JSON.stringify({ $set: updates })] : [],
    messages as unknown[],
  );
}

function document(
  fingerprint: string,
  records: string[],
  before: string[],
  after: string[],
  messages: unknown[] = [],
): ChatDocument {
  return {
    fingerprint,
    resumeAt(last) {
      if (!last || last.fingerprint !== fingerprint || records.length < last.offset) return 0;
      const previous = messages[last.offset - 1];
      return isObject(previous) && (previous as Message).type === 'gemini' ? last.offset - 1 : last.offset;
    },
    async *batches(from) {
      let lines = [...before];
      let bytes = 0;
      for (let i = from; i < records.length; i += 1) {
        const record = records[i] as string;
        lines.push(record);
        bytes += record.length;
        if (bytes >= BATCH_BYTES && i + 1 < records.length) {
          yield { lines, end: i + 1 };
          lines = [];
          bytes = 0;
        }
      }
      yield { lines: [...lines, ...after], end: records.length };
    },
  };
}
