import type { Message } from '../../src-shared/sessions.js';
import {
  describeIssues,
  EXPORT_TYPE,
  ExportEndSchema,
  MessageLineSchema,
  SessionEndSchema,
  SessionHeadSchema,
  type SessionHead,
} from './format.js';
import { LineTooLong, MAX_LINE_BYTES } from './lines.js';
import { MessageSpool } from './message-spool.js';
import {
  inBatches,
  isObject,
  messageTooLarge,
  parseJson,
  type Entry,
  type NumberedLine,
  type Sender,
} from './import-records.js';

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
export async function* version2(
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
