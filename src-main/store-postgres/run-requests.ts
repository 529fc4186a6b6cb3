import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import type { Logger } from '../clock.js';
import { describeError } from '../store/errors.js';
import type { PostgresRunLeases } from './leases.js';

/** The channel every server process of one team database listens on for requests about runs. */
const RUN_REQUESTS_CHANNEL = 'sessiondesk_run_requests';
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more: longer messages go in pieces. */
const PIECE_BYTES = 7800;
/** How long the process holding a lease has to take a request sent to it. */
const TAKE_WITHIN_MS = 5000;
/** How long a request it took may take to be answered (a stop waits for the run's programs to end). */
const ANSWER_WITHIN_MS = 30_000;
/** How often a process waiting for an answer looks whether the one it asked still runs. */
const ALIVE_EVERY_MS = 1000;
/** Pieces of a message not complete after this long are dropped (their listener reconnected). */
const PIECES_KEPT_MS = 60_000;

/** How a request sent to the process holding a session's lease went. */
export type Delivery =
  /** It answered this. */
  | { kind: 'answered'; answer: unknown }
  /** No process holds the lease, or the one that did no longer does: ask again. */
  | { kind: 'not-held' }
  /** It did not take the request within `TAKE_WITHIN_MS`, or took it and did not answer in time. */
  | { kind: 'no-answer'; taken: boolean; ms: number }
  /** Its connection to the database is gone: it stopped before it answered. */
  | { kind: 'gone' };

type Message =
  | { type: 'request'; id: string; from: string; sessionId: string; request: unknown }
  /** From the holder: it takes the request (`taken`), holds the lease no more, or dropped it. */
  | { type: 'taken' | 'not-held' | 'dropped'; id: string }
  /** From the sender, still waiting: do it. */
  | { type: 'go'; id: string }
  | { type: 'answer'; id: string; answer: unknown };

/**
 * Requests about runs between the server processes of one team database, over NOTIFY: a
 * process that does not run a session's agent sends what it was asked (and authorized) to the
 * process holding the session's lease, found in `pg_locks` by its lease connection's pid, and
 * waits for its answer. Each exchange is a handshake, so that a request is done once or not at
 * all, never after its sender gave up: the holder says it takes the request; the sender, still
 * waiting, says go; only then is it done, and its answer sent back. A process that does not hold
 * the lease (any more) says so at once.
 *
 * Every process hears every message on the channel and keeps those addressed to it (the pid of
 * its lease connection, or its own id); a message over a notification's 8000 bytes (a long
 * follow-up) is sent in pieces in one transaction, which PostgreSQL delivers together and in order.
 */
export async function postgresRunRequests(deps: { sql: Sql; leases: PostgresRunLeases; logger: Logger }) {
  const { sql, leases, logger } = deps;
  const origin = randomUUID();
  /** Requests sent from here, by id: what their holder says settles them. */
  const waiting = new Map<string, (message: Message) => void>();
  /** Requests taken here, each waiting for its sender's go. */
  const goes = new Map<string, () => void>();
  const pieces = new Map<string, { parts: string[]; at: number }>();
  const working = new Set<Promise<void>>();
  let handler: ((sessionId: string, request: unknown) => Promise<unknown>) | null = null;
  let closed = false;

  /** Sends `message` to `to` (a lease connection's pid, or a process's id), in pieces if need be. */
  async function send(to: string, message: Message): Promise<void> {
    const parts = cut(JSON.stringify(message), PIECE_BYTES);
    const key = randomUUID();
    const framed = parts.map((part, i) => `${to} ${key} ${i} ${parts.length}\n${part}`);
    if (framed.length === 1) await sql.notify(RUN_REQUESTS_CHANNEL, framed[0]!);
    else
      await sql.begin(async (tx) => {
        for (const payload of framed) await tx`SELECT pg_notify(${RUN_REQUESTS_CHANNEL}, ${payload})`;
      });
  }

  /** A whole message addressed to this process, once its last piece has come. */
  function assemble(payload: string): Message | null {
    const newline = payload.indexOf('\n');
    if (newline < 0) return null;
    const [to, key, index, count] = payload.slice(0, newline).split(' ');
    if (!key || (to !== origin && to !== String(leases.pid))) return null;
    const part = payload.slice(newline + 1);
    let text = part;
    if (count !== '1') {
      const now = Date.now();
      for (const [k, p] of pieces) if (now - p.at > PIECES_KEPT_MS) pieces.delete(k);
      const entry = pieces.get(key) ?? { parts: [], at: now };
      if (Number(index) !== entry.parts.length) return null;
      entry.parts.push(part);
      pieces.set(key, entry);
      if (entry.parts.length < Number(count)) return null;
      pieces.delete(key);
      text = entry.parts.join('');
    }
    try {
      return JSON.parse(text) as Message;
    } catch {
      return null;
    }
  }

  /** A request sent to this process's lease connection: done only for a lease it holds. */
  async function serve(message: Extract<Message, { type: 'request' }>): Promise<void> {
    const { id, from, sessionId } = message;
    if (!handler || closed || !leases.holds(sessionId)) return send(from, { type: 'not-held', id });
    const go = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        goes.delete(id);
        resolve(false);
      }, TAKE_WITHIN_MS);
      goes.set(id, () => {
        clearTimeout(timer);
        goes.delete(id);
        resolve(true);
      });
    });
    await send(from, { type: 'taken', id });
    // No go in time: the sender gave up, or will once it hears this.
    if (!(await go)) return send(from, { type: 'dropped', id });
    const answer = await handler(sessionId, message.request);
    await send(from, { type: 'answer', id, answer });
  }

  function heard(message: Message): void {
    if (message.type === 'request') {
      const work = serve(message)
        .catch((err: unknown) =>
          logger.warn(
            `A request about the run of ${message.sessionId} from another server process was not answered: ${describeError(err)}`,
          ),
        )
        .finally(() => working.delete(work));
      working.add(work);
    } else if (message.type === 'go') goes.get(message.id)?.();
    else waiting.get(message.id)?.(message);
  }

  const listening = await sql.listen(RUN_REQUESTS_CHANNEL, (payload) => {
    const message = assemble(payload);
    if (message) heard(message);
  });

  /** Whether the backend `pid` still runs: its process's connection has not closed. */
  async function alive(pid: number): Promise<boolean> {
    const [row] = await sql<Array<{ alive: boolean }>>`
      SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}) AS alive`;
    return row?.alive ?? false;
  }

  /** How a request sent to `holder` goes: settled by what it says, its time limits, or its end. */
  function outcome(id: string, holder: number): Promise<Delivery> {
    return new Promise<Delivery>((resolve) => {
      let taken = false;
      let looking = false;
      const settle = (delivery: Delivery) => {
        clearTimeout(limit);
        clearInterval(watch);
        waiting.delete(id);
        resolve(delivery);
      };
      const expire = (ms: number) => () => settle({ kind: 'no-answer', taken, ms });
      let limit = setTimeout(expire(TAKE_WITHIN_MS), TAKE_WITHIN_MS);
      const watch = setInterval(() => {
        if (looking) return;
        looking = true;
        alive(holder)
          .then((yes) => yes || settle({ kind: 'gone' }))
          // The database cannot say: the time limit decides.
          .catch(() => undefined)
          .finally(() => (looking = false));
      }, ALIVE_EVERY_MS);
      waiting.set(id, (message) => {
        if (message.type === 'answer') settle({ kind: 'answered', answer: message.answer });
        else if (message.type === 'not-held') settle({ kind: 'not-held' });
        else if (message.type === 'dropped') settle({ kind: 'no-answer', taken: false, ms: TAKE_WITHIN_MS });
        else if (message.type === 'taken' && !taken) {
          taken = true;
          clearTimeout(limit);
          limit = setTimeout(expire(ANSWER_WITHIN_MS), ANSWER_WITHIN_MS);
          send(String(holder), { type: 'go', id }).catch((err: unknown) => {
            logger.warn(`A request about a run could not go on: ${describeError(err)}`);
            settle({ kind: 'no-answer', taken: false, ms: TAKE_WITHIN_MS });
          });
        }
      });
    });
  }

  return {
    /**
     * Sends `request` about a session to the process holding its lease and waits for how it
     * went: its answer, or why there is none (`Delivery`).
     */
    async send(sessionId: string, request: unknown): Promise<Delivery> {
      const holder = await leases.holderOf(sessionId);
      if (holder === null) return { kind: 'not-held' };
      const id = randomUUID();
      // Waiting before it is sent: the answer may come before the send returns.
      const delivery = outcome(id, holder);
      try {
        await send(String(holder), { type: 'request', id, from: origin, sessionId, request });
      } catch (err) {
        waiting.get(id)?.({ type: 'not-held', id });
        await delivery;
        throw err;
      }
      return delivery;
    },
    /** How this process answers the requests sent to it: given once, before it takes a lease. */
    answer(answer: (sessionId: string, request: unknown) => Promise<unknown>): void {
      handler = answer;
    },
    async close(): Promise<void> {
      closed = true;
      await listening.unlisten().catch(() => undefined);
      for (const settle of [...waiting.values()]) settle({ type: 'dropped', id: '' });
      await Promise.allSettled([...working]);
    },
  };
}

/** `text` cut into parts of at most `maxBytes` of UTF-8 each, never inside a character. */
function cut(text: string, maxBytes: number): string[] {
  if (Buffer.byteLength(text) <= maxBytes) return [text];
  const parts: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) {
      parts.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += code > 0xffff ? 2 : 1;
  }
  parts.push(text.slice(start));
  return parts;
}
