import { ErrorResponseSchema } from '../../src-shared/errors.js';
import type { SessionStatus } from '../../src-shared/sessions.js';
import {
  PUSH_PART_BYTES,
  PUSH_PART_MESSAGES,
  PUSH_SESSIONS_PATH,
  PushedStateSchema,
  type PushedState,
} from '../data/push-format.js';
import { CliError } from './admin-target.js';
import type { OutputSink } from './output.js';

/**
 * The desktop's side of `sessiondesk push`: the team server asked how far it holds each
 * session of the local export, and sent the rest in parts. The server is the only record of
 * what was sent, so a push killed anywhere resumes from what the server holds.
 */
export interface TeamServer {
  url: string;
  key: string;
  machine: string;
}

export interface PushReport {
  sessions: number;
  messages: number;
  unchanged: number;
  /** Sessions the server would not take, and why. */
  refused: { sessionId: string; reason: string }[];
}

/** Thrown from the export's sink to stop a pass when a signal asks to. */
export class PushStopped extends Error {}

/**
 * A request that was refused: its status and message, and its error code when Session Desk
 * answered (null when something in front of it did: a proxy's own page is not ours).
 */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** What Node's TLS and socket errors mean for a person pushing, by their code. */
const CONNECT_PROBLEMS: Record<string, (url: URL) => string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: untrusted,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: untrusted,
  SELF_SIGNED_CERT_IN_CHAIN: untrusted,
  DEPTH_ZERO_SELF_SIGNED_CERT: untrusted,
  CERT_UNTRUSTED: untrusted,
  ERR_TLS_CERT_ALTNAME_INVALID: (url) =>
    `its certificate is not for ${url.hostname}: use in --to a name the certificate holds (the team server's public URL)`,
  CERT_HAS_EXPIRED: () => 'its certificate has expired: the team server must renew it',
  ECONNREFUSED: (url) => `nothing listens at ${url.host}: check --to, and that the server or its proxy runs`,
  ENOTFOUND: (url) => `${url.hostname} is not a host name this machine can find: check --to`,
  EAI_AGAIN: (url) => `${url.hostname} could not be looked up (no name server answered): check the network`,
  ETIMEDOUT: (url) => `${url.host} did not answer in time: check the network and --to`,
  ECONNRESET: (url) => `${url.host} closed the connection: if it serves HTTPS, --to must start with https://`,
  ERR_SSL_WRONG_VERSION_NUMBER: (url) =>
    `${url.host} does not speak HTTPS there: if it serves plain HTTP, --to must start with http://`,
};

function untrusted(): string {
  return (
    'its certificate is not one this machine trusts. If the team uses a certificate authority of its own, ' +
    'give its certificate to Node: NODE_EXTRA_CA_CERTS=/path/to/ca.pem sessiondesk push …'
  );
}

/** The innermost cause of a failed fetch, where Node puts the code that says what went wrong. */
function rootCause(err: unknown): { code?: string; message: string } {
  let cause = err as { code?: string; message?: string; cause?: unknown } | undefined;
  while (cause && typeof cause === 'object' && cause.cause && typeof cause.cause === 'object') {
    cause = cause.cause as typeof cause;
  }
  return { ...(cause?.code ? { code: cause.code } : {}), message: cause?.message ?? String(err) };
}

async function call(server: TeamServer, method: string, path: string, body?: string): Promise<unknown> {
  let response: Response;
  const url = new URL(path, server.url);
  try {
    response = await fetch(url, {
      method,
      headers: {
        'x-api-key': server.key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    });
  } catch (err) {
    const cause = rootCause(err);
    const problem = cause.code ? CONNECT_PROBLEMS[cause.code]?.(url) : undefined;
    throw new CliError(
      problem
        ? `Cannot push to the team server at ${server.url}: ${problem} (${cause.message}).`
        : `Cannot reach the team server at ${server.url} (${cause.message}). Check --to.`,
    );
  }
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location');
    throw new CliError(
      `The server at ${server.url} redirects${location ? ` to ${new URL(location, url).origin}` : ''}: ` +
        'give the address it redirects to as --to (a team server behind a proxy: its https:// public URL).',
    );
  }
  const text = await response.text();
  let value: unknown = null;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: described by its status below.
  }
  if (response.ok) return value;
  const parsed = ErrorResponseSchema.safeParse(value);
  if (parsed.success) {
    const message = [
      parsed.data.error.message,
      ...(parsed.data.error.details ?? []).map((d) => `${d.path} ${d.message}`),
    ].join('; ');
    throw new Refused(response.status, message, parsed.data.error.code);
  }
  const title = /<title>([^<]{1,200})<\/title>/iu.exec(text)?.[1]?.trim();
  throw new Refused(
    response.status,
    title ? `HTTP ${response.status}, "${title}"` : `HTTP ${response.status}`,
    null,
  );
}

/** A refusal that stops the whole push, said for a person, in terms of its cause. */
function fatal(server: TeamServer, err: Refused): CliError {
  if (err.code === null) {
    return new CliError(
      `Something in front of the team server at ${server.url} (a proxy or load balancer, not Session Desk) answered ` +
        `${err.message}: ${err.status === 502 || err.status === 503 || err.status === 504 ? 'the team server behind it may be down' : 'check --to and the proxy'}.`,
    );
  }
  if (err.code === 'forbidden_host' || err.code === 'forbidden_origin') {
    return new CliError(
      `The team server at ${server.url} refused the address the request was sent to (${err.message}). ` +
        'Use its public URL as --to; if that is what you used, its proxy must pass on the Host it received.',
    );
  }
  if (err.status === 401) {
    return new CliError(`The team server at ${server.url} refused the key (${err.message}). Check --key.`);
  }
  if (err.status === 403) {
    return new CliError(`The team server at ${server.url} does not let this key push (${err.message}).`);
  }
  if (err.status === 429) {
    return new CliError(`The team server at ${server.url} refused for now (${err.message}).`);
  }
  return new CliError(`The team server at ${server.url} answered ${err.status}: ${err.message}`);
}

/**
 * Checks, before anything is read, that the server has the push routes and takes the key: an
 * empty part is refused as invalid (400) only after the key was accepted.
 */
export async function checkTeamServer(server: TeamServer): Promise<void> {
  try {
    await call(server, 'POST', PUSH_SESSIONS_PATH, '{}');
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    // Session Desk's own 400 (a proxy's page is not one): the key was taken.
    if (err.status === 400 && err.code !== null) return;
    if (err.status === 404) {
      throw new CliError(
        `The server at ${server.url} has no push route (${PUSH_SESSIONS_PATH}): it is a Session Desk too old ` +
          'to receive pushed sessions, or not Session Desk at all. Update the team server.',
      );
    }
    throw fatal(server, err);
  }
  throw new CliError(
    `The server at ${server.url} accepted an empty push: it is not a Session Desk team server.`,
  );
}

async function heldState(server: TeamServer, sessionId: string): Promise<PushedState | null> {
  try {
    return PushedStateSchema.parse(await call(server, 'GET', `${PUSH_SESSIONS_PATH}/${sessionId}`));
  } catch (err) {
    if (err instanceof Refused && err.status === 404 && err.code !== null) return null;
    throw err;
  }
}

interface LocalSession {
  id: string;
  /** The `session` record as exported, and what the server must know of it. */
  headJson: string;
  messageCount: number;
  updatedAt: string;
  status: SessionStatus;
  /** Messages the server holds (null: not the session at all); sending starts after them. */
  from: number | null;
  index: number;
  part: string[];
  partBytes: number;
  sent: number;
}

/**
 * What a pass found the server to hold, or refuse, of each session, as the session was then:
 * the next pass of --watch asks the server again only about sessions changed since.
 */
export type KnownSessions = Map<string, { messageCount: number; updatedAt: string; status: SessionStatus }>;

/** How a message record of the export starts (export.ts writes its `type` first). */
const MESSAGE_RECORD = Buffer.from('{"type":"message"');

/**
 * A sink for the local export (NDJSON) that pushes as it reads: it holds at most one part of
 * one session, and waits for the server before it takes more, so the export is read at the
 * pace the server takes it. Messages the server holds are passed over without being parsed.
 */
export function pushingSink(
  server: TeamServer,
  report: PushReport,
  known: KnownSessions,
  stopping: () => boolean,
): OutputSink & { finish(): void } {
  let pending: Buffer[] = [];
  let bytes = 0;
  let current: LocalSession | null = null;

  async function sendPart(session: LocalSession, last: boolean): Promise<void> {
    if (session.from === null) return;
    if (session.part.length === 0 && !last) return;
    const from = session.from + session.sent;
    const body =
      `{"machine":${JSON.stringify(server.machine)},"session":${session.headJson},` +
      `"from":${from},"messages":[${session.part.join(',')}]}`;
    await call(server, 'POST', PUSH_SESSIONS_PATH, body);
    session.sent += session.part.length;
    session.part = [];
    session.partBytes = 0;
  }

  /**
   * A refusal of one session (409: not this key's to change; 400: a record the server does not
   * take, such as a time in its future) is reported and the push goes on; anything else stops it.
   */
  async function guarded(session: LocalSession, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      if (!(err instanceof Refused) || err.code === null || (err.status !== 409 && err.status !== 400)) {
        throw err instanceof Refused ? fatal(server, err) : err;
      }
      report.refused.push({ sessionId: session.id, reason: err.message });
      remember(session);
      session.from = null;
    }
  }

  const remember = ({ id, messageCount, updatedAt, status }: LocalSession) =>
    known.set(id, { messageCount, updatedAt, status });

  async function message(session: LocalSession, bytes: Buffer): Promise<void> {
    const index = session.index;
    session.index += 1;
    if (session.from === null || index < session.from) return;
    if (
      session.part.length > 0 &&
      (session.partBytes + bytes.length > PUSH_PART_BYTES || session.part.length >= PUSH_PART_MESSAGES)
    ) {
      await guarded(session, () => sendPart(session, false));
      if (session.from === null) return;
    }
    session.part.push(bytes.toString('utf8'));
    session.partBytes += bytes.length;
  }

  async function line(bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    if (current !== null && bytes.subarray(0, MESSAGE_RECORD.length).equals(MESSAGE_RECORD)) {
      return message(current, bytes);
    }
    const text = bytes.toString('utf8');
    const record = JSON.parse(text) as { type?: unknown };
    if (record.type === 'session') {
      if (stopping()) throw new PushStopped();
      const head = record as { id: string; messageCount: number; updatedAt: string; status: SessionStatus };
      const session: LocalSession = {
        id: head.id,
        headJson: text,
        messageCount: head.messageCount,
        updatedAt: head.updatedAt,
        status: head.status,
        from: null,
        index: 0,
        part: [],
        partBytes: 0,
        sent: 0,
      };
      current = session;
      const before = known.get(session.id);
      if (
        before?.messageCount === session.messageCount &&
        before.updatedAt === session.updatedAt &&
        before.status === session.status
      )
        return;
      await guarded(session, async () => {
        const held = await heldState(server, session.id);
        // A status can change alone (a session settled once its CLI's file went quiet).
        if (
          held &&
          held.messageCount === session.messageCount &&
          held.updatedAt === session.updatedAt &&
          (held.status === undefined || held.status === session.status)
        ) {
          report.unchanged += 1;
          remember(session);
          return;
        }
        if (held && held.messageCount > session.messageCount) {
          report.refused.push({
            sessionId: session.id,
            reason: `the team server holds ${held.messageCount} messages of it, more than the ${session.messageCount} here`,
          });
          remember(session);
          return;
        }
        session.from = held?.messageCount ?? 0;
      });
      return;
    }
    const session = current;
    if (!session) return;
    if (record.type === 'message') return message(session, bytes);
    if (record.type === 'session-end') {
      current = null;
      if (session.from === null) return;
      await guarded(session, () => sendPart(session, true));
      if (session.from === null) return;
      remember(session);
      report.sessions += 1;
      report.messages += session.sent;
    }
  }

  return {
    get bytes() {
      return bytes;
    },
    async write(chunk) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
      bytes += buffer.length;
      let start = 0;
      for (;;) {
        const newline = buffer.indexOf(10, start);
        if (newline === -1) {
          if (start < buffer.length) pending.push(buffer.subarray(start));
          return;
        }
        pending.push(buffer.subarray(start, newline));
        const record = Buffer.concat(pending);
        pending = [];
        await line(record);
        start = newline + 1;
      }
    },
    commit: async () => undefined,
    abort: async () => undefined,
    finish() {
      if (current !== null)
        throw new CliError('The local export ended inside a session; nothing more was sent.');
    },
  };
}
