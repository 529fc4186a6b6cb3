import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import type { SessionEvent } from '../../src-shared/sessions.js';
import type { Logger } from '../clock.js';
import { describeError } from '../store/errors.js';
import type { EventBus } from '../events/event-bus.js';
import { readMessagePage, settledRow, type TranscriptReads } from '../sessions/transcript-reads.js';
import type { CredentialChanges } from './auth/credential-changes.js';

/** The channel every server process of one team database listens on. */
export const EVENTS_CHANNEL = 'sessiondesk_events';
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const PAYLOAD_MAX_BYTES = 7900;

/** What one process tells the others of an event it published, or of a credential that ended. */
interface Relayed {
  /** The process that published it: it ignores its own. */
  origin: string;
  /**
   * Its place among that process's notifications. PostgreSQL delivers only one of the
   * notifications with the same payload that one transaction sends; those sent together are
   * told apart.
   */
  n: number;
  /** A credential ended (a key revoked, a member removed, a sign-out): streams are checked again. */
  credentials?: true;
  workspaceId?: string;
  /** The event, when it fits in a notification. */
  event?: SessionEvent;
  /** A message too large for a notification: the others read it from its transcript. */
  message?: { sessionId: string; index: number };
}

/**
 * Tells every server process of the team database that a credential ended, from a process
 * that is not a server (the command line's `key revoke`, `member remove`).
 */
export async function relayCredentialsEnded(sql: Sql): Promise<void> {
  const relayed: Relayed = { origin: randomUUID(), n: 1, credentials: true };
  await sql.notify(EVENTS_CHANNEL, JSON.stringify(relayed));
}

/**
 * Live events between the server processes of one team database: each event a process
 * publishes goes to the others with NOTIFY, and each publishes what the others sent to its own
 * clients, so a client connected to any process sees every session change. A credential that
 * ended goes the same way, in the same order as the events: a process hears of it before any
 * event published after it, and checks its streams again at once. A message too large
 * for a notification (an agent's long output) is sent as where to read it, and read from its
 * transcript, committed before the event was published; any other event too large becomes a
 * `reset` (the client fetches afresh). Relayed events are published in the order they arrived.
 * Event ids are each process's own: a client that reconnects to another process gets a reset.
 */
export async function startEventRelay(deps: {
  sql: Sql;
  events: EventBus;
  credentials: CredentialChanges;
  reads: TranscriptReads;
  logger: Logger;
}): Promise<{ close(): Promise<void> }> {
  const { sql, events, credentials, reads, logger } = deps;
  const origin = randomUUID();
  let order: Promise<void> = Promise.resolve();
  let published = 0;
  /** The payloads waiting for the notification before them to be sent. */
  let waiting: string[] = [];
  let sending: Promise<void> | null = null;

  /**
   * One statement at a time, in order: two sent at once on two connections of the pool could
   * commit, and reach the others, in either order. The notifications made meanwhile go together
   * in the next statement, in order (one each, from one transaction): a round trip per event
   * limited a busy process to what one connection answers one by one.
   */
  function sendWaiting(): Promise<void> {
    const payloads = waiting;
    waiting = [];
    return sql`SELECT pg_notify(${EVENTS_CHANNEL}, p) FROM unnest(${payloads}::text[]) WITH ORDINALITY AS e(p, i)
      ORDER BY i`.then(
      () => undefined,
      (err: unknown) =>
        logger.warn(`An event could not reach the other server processes: ${describeError(err)}`),
    );
  }
  /** Resolves once the payload is sent (with those before and after it), or once that failed. */
  function relay(payload: string): Promise<void> {
    waiting.push(payload);
    sending ??= (async () => {
      while (waiting.length > 0) await sendWaiting();
      sending = null;
    })();
    return sending;
  }

  async function eventOf(relayed: Relayed): Promise<SessionEvent | null> {
    if (relayed.event) return relayed.event;
    if (!relayed.message) return null;
    const { sessionId, index } = relayed.message;
    const row = await settledRow(reads, sessionId);
    if (!row) return null;
    const [bytes] = (await readMessagePage(reads, row, index, 1, Infinity)).messages;
    if (!bytes) return null;
    return { type: 'message.added', sessionId, index, message: JSON.parse(bytes.toString('utf8')) as never };
  }

  const listening = await sql.listen(EVENTS_CHANNEL, (payload) => {
    let relayed: Relayed;
    try {
      relayed = JSON.parse(payload) as Relayed;
    } catch {
      return;
    }
    if (relayed.origin === origin) return;
    // At once, not after the relayed events still being read: from here on, every stream holds
    // what it would send, its own process's events too, until its credential is checked again.
    if (relayed.credentials) return credentials.heard();
    const { workspaceId } = relayed;
    if (workspaceId === undefined) return;
    order = order
      .then(async () => {
        const event = await eventOf(relayed);
        if (event) events.publish(workspaceId, event, 'relay');
      })
      .catch((err: unknown) =>
        logger.warn(`An event from another server process was lost: ${describeError(err)}`),
      );
  });

  const unsubscribe = events.subscribe((entry) => {
    if (entry.relayed) return;
    const n = (published += 1);
    const whole: Relayed = { origin, n, workspaceId: entry.workspaceId, event: entry.event };
    let payload = JSON.stringify(whole);
    if (Buffer.byteLength(payload) > PAYLOAD_MAX_BYTES) {
      const { event } = entry;
      const smaller: Relayed =
        event.type === 'message.added'
          ? {
              origin,
              n,
              workspaceId: entry.workspaceId,
              message: { sessionId: event.sessionId, index: event.index },
            }
          : {
              origin,
              n,
              workspaceId: entry.workspaceId,
              event: {
                type: 'reset',
                reason: 'A change too large to relay between server processes: fetch afresh.',
              },
            };
      payload = JSON.stringify(smaller);
    }
    void relay(payload);
  });

  const stopRelayingCredentials = credentials.relayWith(() =>
    relay(JSON.stringify({ origin, n: (published += 1), credentials: true } satisfies Relayed)),
  );

  return {
    async close() {
      unsubscribe();
      stopRelayingCredentials();
      await listening.unlisten().catch(() => undefined);
      await Promise.all([order, sending]);
    },
  };
}
