import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { SessionRow } from '../store/session-row.js';
import type { Repos, Storage } from '../store/storage.js';
import { writeSessionPart } from './import.js';
import type { ImportedMessage } from './import-records.js';
import { messageTooLarge } from './import-records.js';
import type { PushedState, PushPart } from './push-format.js';

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

/** Who pushes: the key's workspace, and the member who made the key in the dashboard, if one did. */
export interface Pusher {
  workspaceId: string;
  keyCreatorId: string | null;
}

const conflict = (message: string) => new AppError(409, 'conflict', message);

/** The pushed session as the server holds it; null when it has none of that id. */
async function heldState(repos: Repos, pusher: Pusher, sessionId: string): Promise<PushedState | null> {
  const row = await repos.sessions.find(sessionId);
  if (!row) return null;
  if (row.workspaceId !== pusher.workspaceId) {
    throw conflict(
      `Session ${sessionId} belongs to another workspace on this server; a push never changes it`,
    );
  }
  if (row.pushedFrom === undefined) {
    throw conflict(
      `Session ${sessionId} was not pushed to this server (it was made here); a push never changes it`,
    );
  }
  return { messageCount: row.messageCount, updatedAt: row.updatedAt, status: row.status };
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
  state: PushedState;
  row: SessionRow;
  created: boolean;
}

export async function receivePushPart(target: PushTarget, pusher: Pusher, part: PushPart): Promise<Received> {
  const { session: head } = part;
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
    const owner = (await tx.workspaces.members(pusher.workspaceId)).find((m) => m.role === 'owner');
    if (!owner) throw new Error(`Workspace ${pusher.workspaceId} has no owner`);
    // A member's key pushes that member's sessions: what a desktop says of its authors only
    // shows as where the session came from. A key the administrator made may place sessions
    // with the accounts their emails name, as an import does.
    const people = new Map<string, string>();
    for (const { sender } of messages) {
      if (sender === null || sender === 'session-author' || people.has(sender.email)) continue;
      people.set(sender.email, await personByEmail(tx, pusher, sender.email, owner.userId));
    }
    const authorId = await personByEmail(tx, pusher, head.author.email, owner.userId);
    const personFor = (message: ImportedMessage): string | null => {
      if (message.sender === null) return null;
      if (message.sender === 'session-author') return authorId;
      return people.get(message.sender.email) ?? owner.userId;
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
      authorId,
      personFor,
    );
    await tx.sessionOrigins.record(head.id, {
      machine: part.machine,
      authorName: head.author.name,
      authorEmail: head.author.email,
      pushedAt: target.clock.now().toISOString(),
      folder: head.folder,
    });
    const row = await tx.sessions.find(head.id);
    if (!row) throw new Error(`Session ${head.id} is missing after its push`);
    return {
      state: { messageCount: row.messageCount, updatedAt: row.updatedAt, status: row.status },
      row,
      created: held === null,
    };
  });
}

/** The account a pushed session or message goes to, by the email the desktop gave. */
async function personByEmail(tx: Repos, pusher: Pusher, email: string, ownerId: string): Promise<string> {
  return pusher.keyCreatorId ?? (await tx.users.findByEmail(email))?.id ?? ownerId;
}
