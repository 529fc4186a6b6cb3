import type { Clock } from '../clock.js';
import { AppError, badRequest } from '../errors.js';
import type { SessionRow } from '../store/session-row.js';
import type { Repos, Storage } from '../store/storage.js';
import { writeSessionPart } from './import.js';
import type { ImportedMessage } from './import-records.js';
import { messageTooLarge } from './import-records.js';
import type { PushAnswer, PushedState, PushPart } from './push-format.js';

/**
 * The team server's side of `sessiondesk push`: how far it holds a pushed session, and a part
 * of one applied. A part is applied only when the server holds exactly the messages it follows
 * (so a retried or repeated part changes nothing), into a session this workspace received by
 * push: never one of another workspace, never one run here.
 */
export interface PushTarget {
  storage: Storage;
  clock: Clock;
}

/**
 * Who pushes: the key, its workspace, and the member who made the key in the dashboard (null
 * for a key the administrator made on the command line).
 */
export interface Pusher {
  keyId: string;
  workspaceId: string;
  keyCreatorId: string | null;
}

/** How far ahead of this server's clock a desktop's clock may run: times past it are refused. */
export const CLOCK_SKEW_MS = 5 * 60_000;

const conflict = (message: string) => new AppError(409, 'conflict', message);

/**
 * The pushed session as the server holds it; null when it has none of that id. Only the key
 * that first pushed it, or another key of the person who made that one, may read or extend it:
 * a colleague's key of the same workspace may not write into it.
 */
async function heldState(repos: Repos, pusher: Pusher, sessionId: string): Promise<PushedState | null> {
  const row = await repos.sessions.find(sessionId);
  if (!row) return null;
  if (row.workspaceId !== pusher.workspaceId) {
    throw conflict(
      `Session ${sessionId} belongs to another workspace on this server; a push never changes it`,
    );
  }
  const first = await repos.sessionOrigins.pusher(sessionId);
  if (row.pushedFrom === undefined || first === null) {
    throw conflict(
      `Session ${sessionId} was not pushed to this server (it was made here); a push never changes it`,
    );
  }
  const same =
    first.keyId === pusher.keyId || (pusher.keyCreatorId !== null && first.userId === pusher.keyCreatorId);
  if (!same) {
    throw conflict(
      `Session ${sessionId} was pushed with another key; only that key, or a key of the person who made it, may push to it`,
    );
  }
  return { messageCount: row.messageCount, updatedAt: row.updatedAt, status: row.status };
}

/** Every time of the part later than the server's clock allows: a desktop may not date work in the future. */
function futureTimes(part: PushPart, now: Date): { path: string; message: string }[] {
  const latest = now.getTime() + CLOCK_SKEW_MS;
  const times: [string, string | undefined][] = [
    ['body.session.createdAt', part.session.createdAt],
    ['body.session.updatedAt', part.session.updatedAt],
    ['body.session.prMergedAt', part.session.prMergedAt],
    ...(part.session.runs ?? []).map((run, i): [string, string] => [
      `body.session.runs.${i}.endedAt`,
      run.endedAt,
    ]),
    ...(part.session.approvals ?? []).flatMap((a, i): [string, string | undefined][] => [
      [`body.session.approvals.${i}.createdAt`, a.createdAt],
      [`body.session.approvals.${i}.decidedAt`, a.decidedAt],
    ]),
    ...part.messages.map((line, i): [string, string] => [`body.messages.${i}.createdAt`, line.createdAt]),
  ];
  return times
    .filter(([, at]) => at !== undefined && Date.parse(at) > latest)
    .map(([path]) => ({
      path,
      message: `is in the future: more than ${CLOCK_SKEW_MS / 60_000} minutes after this server's time (${now.toISOString()})`,
    }));
}

export function pushedState(
  target: PushTarget,
  pusher: Pusher,
  sessionId: string,
): Promise<PushedState | null> {
  return heldState(target.storage.repos, pusher, sessionId);
}

/** What a part did: the session as it now is, and whether the part brought it here. */
export interface Received {
  state: PushAnswer;
  row: SessionRow;
  created: boolean;
}

export async function receivePushPart(target: PushTarget, pusher: Pusher, part: PushPart): Promise<Received> {
  const { session: head } = part;
  const future = futureTimes(part, target.clock.now());
  if (future.length > 0) {
    throw badRequest(`${future[0]!.path.replace(/^body\./u, '')} ${future[0]!.message}`, future);
  }
  for (const [i, line] of part.messages.entries()) {
    const large = messageTooLarge(line.message);
    if (large !== null) throw new AppError(413, 'payload_too_large', `messages.${i}.message ${large}`);
  }
  const messages = part.messages.map((line): ImportedMessage => ({
    body: line.message,
    createdAt: line.createdAt,
    sender:
      line.authorEmail === undefined || line.message.type !== 'user'
        ? null
        : { email: line.authorEmail.toLowerCase() },
  }));
  const { messageCount: _count, ...fields } = head;
  return target.storage.write(async (tx) => {
    const members = await tx.workspaces.members(pusher.workspaceId);
    const owner = members.find((m) => m.role === 'owner');
    if (!owner) throw new Error(`Workspace ${pusher.workspaceId} has no owner`);
    const byEmail = new Map(members.map((m) => [m.email.toLowerCase(), m]));
    const creator =
      pusher.keyCreatorId === null ? undefined : members.find((m) => m.userId === pusher.keyCreatorId);
    // A member's key pushes that member's sessions: what a desktop says of its authors only
    // shows as where the session came from. A key the administrator made places sessions with
    // the members their emails name, else with the owner: never with an account outside the
    // workspace, whose id and name its keys would then read.
    const personFor = (email: string) => creator ?? byEmail.get(email.toLowerCase()) ?? owner;
    const author = personFor(head.author.email);
    const senderFor = (message: ImportedMessage): string | null => {
      if (message.sender === null) return null;
      if (message.sender === 'session-author') return author.userId;
      return personFor(message.sender.email).userId;
    };

    const held = await heldState(tx, pusher, head.id);
    if ((held?.messageCount ?? 0) !== part.from) {
      throw conflict(
        `This server holds ${held?.messageCount ?? 0} messages of session ${head.id}, not ${part.from}: ` +
          'ask again how far it holds it, and push from there',
      );
    }
    await writeSessionPart(
      tx,
      pusher.workspaceId,
      { head: fields },
      {
        after: held === null ? null : held.messageCount,
        messages,
        last: part.from + messages.length === head.messageCount,
      },
      author.userId,
      senderFor,
    );
    await tx.sessionOrigins.record(
      head.id,
      {
        machine: part.machine,
        authorName: head.author.name,
        authorEmail: head.author.email,
        pushedAt: target.clock.now().toISOString(),
        folder: head.folder,
      },
      { keyId: pusher.keyId, userId: pusher.keyCreatorId },
    );
    const row = await tx.sessions.find(head.id);
    if (!row) throw new Error(`Session ${head.id} is missing after its push`);
    return {
      state: {
        messageCount: row.messageCount,
        updatedAt: row.updatedAt,
        status: row.status,
        author: { name: author.name, email: author.email },
        ...authorNote(head.author.email, author, creator !== undefined),
      },
      row,
      created: held === null,
    };
  });
}

/** Why the session went to another account than the one the desktop named, when it did. */
function authorNote(
  named: string,
  author: { name: string; email: string; role: string },
  byKeyCreator: boolean,
): { authorNote?: string } {
  if (named.toLowerCase() === author.email.toLowerCase()) return {};
  const who = `${author.name} <${author.email}>`;
  return {
    authorNote: byKeyCreator
      ? `Attributed to ${who}, who made the key it was pushed with; ${named} shows as its author on the desktop it came from.`
      : `${named} is not a member of this workspace: attributed to its owner, ${who}.`,
  };
}
