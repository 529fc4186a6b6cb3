import type { Message } from '../../src-shared/sessions.js';
import { MAX_MESSAGE_BYTES } from '../store/transcript-format.js';
import {
  describeIssues,
  EXPORT_TYPE,
  ExportEndSchema,
  ExportHeaderSchema,
  ExportSessionSchema,
  MessageLineSchema,
  READABLE_VERSIONS,
  SessionEndSchema,
  SessionHeadSchema,
  type ExportFormat,
  type ExportHeader,
  type SessionHead,
} from './format.js';
import { LineTooLong, MAX_LINE_BYTES } from './lines.js';
import { MessageSpool } from './message-spool.js';

/** The input is not an export at all (or one this version cannot read): nothing was imported. */
export class ImportInputError extends Error {}

/** A JSON export is read whole; beyond this, NDJSON (read line by line) is the way. */
const JSON_DOCUMENT_MAX_CHARS = 128 * 2 ** 20;
/** Messages handed to the store in one write: bounded, so a huge session is written in parts. */
const BATCH_BYTES = 2 ** 20;
const BATCH_MESSAGES = 4096;

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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseHeader(value: unknown): ExportHeader {
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

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.message : String(err) };
  }
}

function tooLong(line: LineTooLong): ImportInputError {
  return new ImportInputError(
    `The input is not a Session Desk export it can read: it has a line of ${line.bytes} bytes, over the ` +
      `${MAX_LINE_BYTES / 2 ** 20} MiB limit.`,
  );
}

function messageTooLarge(body: unknown): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
  return bytes > MAX_MESSAGE_BYTES
    ? `is ${bytes} bytes as JSON; the largest a session stores is ${MAX_MESSAGE_BYTES} bytes (16 MiB)`
    : null;
}

/** Groups messages into batches bounded in bytes and in count. */
async function* inBatches(messages: AsyncIterable<{ message: ImportedMessage; bytes: number }>) {
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
function wholeSession(value: unknown): { ok: true; session: ImportedSession } | { ok: false; why: string } {
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

interface NumberedLine {
  lineNo: number;
  text: string | LineTooLong;
}

/** Version 1 NDJSON: one whole session per line. */
async function* version1(next: () => Promise<NumberedLine | null>): AsyncGenerator<Entry> {
  for (let line = await next(); line !== null; line = await next()) {
    const { lineNo, text } = line;
    const at = `line ${lineNo}`;
    const skip = (reason: string, isSession = true): Entry => ({
      kind: 'skip',
      at,
      order: lineNo,
      reason,
      isSession,
    });
    if (text instanceof LineTooLong) {
      yield skip(`${text.bytes} bytes long, over the ${MAX_LINE_BYTES / 2 ** 20} MiB a session may take`);
      continue;
    }
    if (text.trim() === '') continue;
    const parsed = parseJson(text);
    if (!parsed.ok) {
      yield skip(`not JSON (${parsed.why})`);
      continue;
    }
    if (isObject(parsed.value) && parsed.value.type === EXPORT_TYPE) {
      yield skip('a second export header: only one is allowed, at the start', false);
      continue;
    }
    const whole = wholeSession(parsed.value);
    yield whole.ok ? { kind: 'session', at, order: lineNo, session: whole.session } : skip(whole.why);
  }
}

/** A version 2 session whose lines are being read. */
interface OpenSession {
  at: string;
  order: number;
  /** Null when its `session` line was invalid: its lines are read past, then it is skipped. */
  head: SessionHead | null;
  spool: MessageSpool;
  /** The first problem found in its lines: the session is then skipped whole. */
  problem: { at: string; order: number; reason: string } | null;
}

/**
 * Version 2 NDJSON: a session's lines are checked as they arrive and its messages held in a
 * spool (in memory, or a temp file for a big one); only once its `session-end` line agrees
 * is it handed on, so a session is imported whole or not at all, in bounded batches.
 */
async function* version2(
  next: () => Promise<NumberedLine | null>,
  state: { ended: boolean },
): AsyncGenerator<Entry> {
  let open: OpenSession | null = null;

  const close = async (session: OpenSession, reason: string | null): Promise<Entry> => {
    const problem =
      session.problem ?? (reason === null ? null : { at: session.at, order: session.order, reason });
    if (problem === null && session.head !== null) {
      const { messageCount: _count, ...head } = session.head;
      const spool = session.spool;
      return {
        kind: 'session',
        at: session.at,
        order: session.order,
        session: {
          head,
          messageCount: spool.count,
          small: spool.inMemory,
          batches: (from) => inBatches(spooled(spool, from)),
          discard: () => spool.discard(),
        },
      };
    }
    await session.spool.discard();
    const which = session.head === null ? `the session of ${session.at}` : `session ${session.head.id}`;
    const fault = problem ?? { at: session.at, order: session.order, reason: 'is invalid' };
    return {
      kind: 'skip',
      at: fault.at,
      order: fault.order,
      reason: fault.at === session.at ? fault.reason : `${fault.reason} (${which} is not imported)`,
      isSession: true,
    };
  };
  const cutShort = (session: OpenSession) => {
    const expected = session.head === null ? '' : ` of its ${session.head.messageCount}`;
    return (
      `the session's lines stop after ${session.spool.count}${expected} messages, without its ` +
      'session-end line: the file may be cut short'
    );
  };

  for (let line = await next(); line !== null; line = await next()) {
    const { lineNo, text } = line;
    const at = `line ${lineNo}`;
    const problem = (reason: string): Entry | null => {
      if (open) {
        open.problem ??= { at, order: lineNo, reason };
        return null;
      }
      return { kind: 'skip', at, order: lineNo, reason, isSession: false };
    };
    if (text instanceof LineTooLong) {
      const entry = problem(
        `${text.bytes} bytes long, over the ${MAX_LINE_BYTES / 2 ** 20} MiB a line may take`,
      );
      if (entry) yield entry;
      continue;
    }
    if (text.trim() === '') continue;
    const parsed = parseJson(text);
    if (!parsed.ok) {
      const entry = problem(`not JSON (${parsed.why})`);
      if (entry) yield entry;
      continue;
    }
    const value = parsed.value;
    const type = isObject(value) ? value.type : undefined;
    if (state.ended) {
      yield { kind: 'skip', at, order: lineNo, reason: 'after the end line of the export', isSession: false };
      continue;
    }
    if (type === 'session') {
      if (open) yield await close(open, cutShort(open));
      const head = SessionHeadSchema.safeParse(value);
      open = {
        at,
        order: lineNo,
        head: head.success ? head.data : null,
        spool: new MessageSpool(),
        problem: head.success ? null : { at, order: lineNo, reason: describeIssues(head.error) },
      };
    } else if (type === 'message') {
      if (!open) {
        yield {
          kind: 'skip',
          at,
          order: lineNo,
          reason: 'a message line outside a session',
          isSession: false,
        };
        continue;
      }
      if (open.problem) continue;
      const index = open.spool.count;
      const message = MessageLineSchema.safeParse(value);
      const large = message.success ? messageTooLarge((value as { message: unknown }).message) : null;
      if (!message.success) {
        open.problem = { at, order: lineNo, reason: `messages.${index}: ${describeIssues(message.error)}` };
      } else if (large !== null) {
        open.problem = { at, order: lineNo, reason: `messages.${index} ${large}` };
      } else if (open.head && index >= open.head.messageCount) {
        open.problem = {
          at,
          order: lineNo,
          reason: `more messages than the ${open.head.messageCount} its session line announces`,
        };
      } else {
        await open.spool.add(text);
      }
    } else if (type === 'session-end') {
      if (!open) {
        yield {
          kind: 'skip',
          at,
          order: lineNo,
          reason: 'a session-end line outside a session',
          isSession: false,
        };
        continue;
      }
      const end = SessionEndSchema.safeParse(value);
      const session: OpenSession = open;
      open = null;
      if (!end.success) {
        session.problem ??= { at, order: lineNo, reason: describeIssues(end.error) };
      } else if (session.head && end.data.id !== session.head.id) {
        session.problem ??= {
          at,
          order: lineNo,
          reason: `closes session ${end.data.id}, not ${session.head.id}`,
        };
      } else if (
        !session.problem &&
        (session.spool.count !== end.data.messageCount ||
          session.head?.messageCount !== end.data.messageCount)
      ) {
        session.problem = {
          at,
          order: lineNo,
          reason:
            `the session has ${session.spool.count} message lines; its session line announces ` +
            `${session.head?.messageCount ?? '?'} and its session-end line ${end.data.messageCount}`,
        };
      }
      yield await close(session, null);
    } else if (type === 'end') {
      if (open) yield await close(open, cutShort(open));
      open = null;
      const end = ExportEndSchema.safeParse(value);
      if (!end.success) {
        yield { kind: 'skip', at, order: lineNo, reason: describeIssues(end.error), isSession: false };
      }
      state.ended = true;
    } else if (type === EXPORT_TYPE) {
      const entry = problem('a second export header: only one is allowed, at the start');
      if (entry) yield entry;
    } else {
      const entry = problem(`not a line of an export (type ${JSON.stringify(type)})`);
      if (entry) yield entry;
    }
  }
  if (open) yield await close(open, cutShort(open));
}

/** A spooled session's messages from `from` on, with their sizes. */
async function* spooled(spool: MessageSpool, from: number) {
  let index = 0;
  for await (const line of spool.read()) {
    index += 1;
    if (index <= from) continue;
    const value = JSON.parse(line) as { createdAt: string; authorEmail?: string; message: Message };
    const sender: Sender =
      value.authorEmail === undefined || value.message.type !== 'user'
        ? null
        : { email: value.authorEmail.toLowerCase() };
    yield { message: { body: value.message, createdAt: value.createdAt, sender }, bytes: line.length };
  }
}

/**
 * Reads the input's format and header, and yields its sessions one by one. NDJSON is read
 * line by line (version 2 holds at most one batch of a session in memory); a JSON document
 * is read whole (use NDJSON for very large workspaces).
 */
export async function openInput(lines: AsyncIterable<string | LineTooLong>): Promise<Input> {
  const iterator = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  const next = async (): Promise<NumberedLine | null> => {
    const result = await iterator.next();
    if (result.done) return null;
    lineNo += 1;
    return { lineNo, text: result.value };
  };
  let firstLine: string | null = null;
  for (let line = await next(); line !== null; line = await next()) {
    if (line.text instanceof LineTooLong) throw tooLong(line.text);
    const text = line.lineNo === 1 ? line.text.replace(/^\uFEFF/u, '') : line.text;
    if (text.trim() !== '') {
      firstLine = text;
      break;
    }
  }
  if (firstLine === null) throw new ImportInputError('The input is empty: not a Session Desk export.');

  const first = parseJson(firstLine);
  if (first.ok && isObject(first.value) && !('sessions' in first.value)) {
    const header = parseHeader(first.value);
    if (header.version === 1) return { format: 'ndjson', header, entries: version1(next), ended: () => null };
    const state = { ended: false };
    return { format: 'ndjson', header, entries: version2(next, state), ended: () => state.ended };
  }

  // Not a header line: the whole input must be one JSON document, an object.
  const notAnExport = (why: string) =>
    new ImportInputError(
      `The input is not a Session Desk export: neither NDJSON that starts with a header line nor a JSON ` +
        `document (${why}).`,
    );
  if (!firstLine.trimStart().startsWith('{')) throw notAnExport('it does not start with "{"');
  let text = firstLine;
  for (let line = await next(); line !== null; line = await next()) {
    if (line.text instanceof LineTooLong) throw tooLong(line.text);
    if (text.length + line.text.length + 1 > JSON_DOCUMENT_MAX_CHARS) {
      throw new ImportInputError(
        `The input is a JSON document over ${JSON_DOCUMENT_MAX_CHARS / 2 ** 20} MiB, too large to read ` +
          'whole: export the workspace as NDJSON (the default), which is read line by line.',
      );
    }
    text += `\n${line.text}`;
  }
  const whole = parseJson(text);
  if (!whole.ok) throw notAnExport(whole.why);
  if (!isObject(whole.value) || !Array.isArray(whole.value.sessions)) {
    throw new ImportInputError('The input is not a Session Desk export: no header and no "sessions" array.');
  }
  const { sessions, ...rest } = whole.value;
  const header = parseHeader(rest);
  async function* json(): AsyncGenerator<Entry> {
    let index = 0;
    for (const value of sessions as unknown[]) {
      index += 1;
      const at = `session ${index}`;
      const checked = wholeSession(value);
      yield checked.ok
        ? { kind: 'session', at, order: index, session: checked.session }
        : { kind: 'skip', at, order: index, reason: checked.why, isSession: true };
    }
  }
  return { format: 'json', header, entries: json(), ended: () => null };
}
