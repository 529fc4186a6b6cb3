/** Data directories, workspaces and exports for the export and import tests. */
import { rmSync } from 'node:fs';
import { afterEach, expect } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { newId } from '../../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { exportChunks } from '../../src-main/data/export.js';
import { SessionHeadSchema, type ExportFormat } from '../../src-main/data/format.js';
import { createRepositories, type Repositories } from '../../src-main/store/repositories.js';
import type { Storage } from '../../src-main/store/storage.js';
import { Store } from '../../src-main/store/store.js';
import type { Message } from '../../src-shared/sessions.js';
import { FULL_TASKS, FULL_TRANSCRIPT } from './seed.js';
import { tempDir } from './server.js';
import { readsOf, storageOf } from '../../src-main/store/sqljs-storage.js';

export interface Opened {
  store: Store;
  repos: Repositories;
  /** What an import writes through. */
  storage: Storage;
  dataDir: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export async function open(): Promise<Opened> {
  const dataDir = tempDir('sessiondesk-data-');
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  cleanups.push(() => store.close({ snapshot: false }));
  return { store, repos: createRepositories(store.db), storage: storageOf(store), dataDir };
}

/** A user without a password worth hashing: these tests never sign in. */
export async function addUser(db: Opened, email: string, name: string): Promise<string> {
  const id = newId('user');
  await db.store.write(() =>
    db.repos.users.insert({ id, email, name, passwordHash: 'unused', createdAt: new Date().toISOString() }),
  );
  return id;
}

/** A workspace owned by `ownerEmail` (created if need be), with `memberEmail` as a member. */
export async function workspace(db: Opened, ownerEmail: string, memberEmail?: string) {
  const ownerId = db.repos.users.findByEmail(ownerEmail)?.id ?? (await addUser(db, ownerEmail, 'Owner'));
  const accounts = createAccounts(storageOf(db.store), systemClock);
  const { organizationId } = await accounts.createWorkspace({ name: 'Acme', ownerEmail });
  let memberId: string | undefined;
  if (memberEmail) {
    memberId = db.repos.users.findByEmail(memberEmail)?.id ?? (await addUser(db, memberEmail, 'Member'));
    await accounts.addMember({ organizationId, email: memberEmail });
  }
  return { organizationId, ownerId, memberId: memberId as string };
}

/** A data directory holding the same accounts and workspace (same ids) as `source`'s. */
export async function sameAccounts(source: Opened, organizationId: string): Promise<Opened> {
  const target = await open();
  const workspaceRow = source.repos.workspaces.findById(organizationId)!;
  const members = source.repos.workspaces.members(organizationId);
  await target.store.write(() => {
    for (const member of members) {
      const user = source.repos.users.findByEmail(member.email)!;
      target.repos.users.insert(user);
    }
    target.repos.workspaces.insert(workspaceRow);
    for (const member of members) {
      target.repos.workspaces.addMember(organizationId, member.userId, member.role, workspaceRow.createdAt);
    }
  });
  return target;
}

export const OWNER = 'ada@example.test';
export const MEMBER = 'grace@example.test';
export const T0 = Date.parse('2030-01-06T10:00:00.000Z');
export const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** The follow-up another member sends in seedRich's first session. */
const FOLLOW_UP: Message = { type: 'user', message: { content: 'Also update the changelog' } };
/** The first message of seedRich's second session, with fields beyond the schema's. */
const EXTRA_FIELDS: Message = {
  type: 'user',
  message: { content: 'Explain the cache', id: 'm1' },
  uuid: 'u-1',
} as Message;

/** What seedRich writes into each of its sessions, in order: the answer key of what an export holds. */
export const RICH_TRANSCRIPTS: readonly [Message[], Message[], Message[]] = [
  [...FULL_TRANSCRIPT, FOLLOW_UP],
  [EXTRA_FIELDS],
  [],
];

/**
 * Three sessions that cover what an export must carry: a full transcript with tasks, a
 * branch, a merged pull request and a follow-up by another member; a session created
 * without a prompt whose first message has extra fields; and an empty failed one.
 */
export async function seedRich(db: Opened) {
  const { organizationId, ownerId, memberId } = await workspace(db, OWNER, MEMBER);
  const ids = [newId('session'), newId('session'), newId('session')] as const;
  const { sessions } = db.repos;
  await db.store.write(() => {
    sessions.insert({
      id: ids[0],
      workspaceId: organizationId,
      authorId: ownerId,
      title: 'Fix the flaky login test',
      model: 'claude-opus-4-6',
      createdAt: at(0),
      baseBranch: 'main',
      repoUrl: 'https://github.com/acme/web',
      repository: 'acme/web',
      initialMessage: (FULL_TRANSCRIPT[0] as Extract<Message, { type: 'user' }>).message.content,
    });
    FULL_TRANSCRIPT.slice(1).forEach((m, i) =>
      sessions.appendMessage(ids[0], organizationId, m, null, at(i + 1)),
    );
    sessions.appendMessage(ids[0], organizationId, FOLLOW_UP, memberId, at(10));
    sessions.replaceTasks(ids[0], FULL_TASKS);
    sessions.setBranch(ids[0], 'agent/fix-flaky-login', at(11));
    sessions.updatePullRequest(
      ids[0],
      { number: 42, url: 'https://github.com/acme/web/pull/42', status: 'merged', mergedAt: at(12) },
      at(12),
    );
    sessions.update(ids[0], { status: 'completed' }, at(13));

    sessions.insert({
      id: ids[1],
      workspaceId: organizationId,
      authorId: memberId,
      title: 'Untitled session',
      model: 'claude-sonnet-4',
      createdAt: at(20),
      baseBranch: 'develop',
    });
    sessions.appendMessage(ids[1], organizationId, EXTRA_FIELDS, memberId, at(21));

    sessions.insert({
      id: ids[2],
      workspaceId: organizationId,
      authorId: ownerId,
      title: 'Nothing happened',
      model: 'claude-opus-4-6',
      createdAt: at(30),
      baseBranch: 'main',
    });
    sessions.update(ids[2], { status: 'failed' }, at(31));
  });
  return { organizationId, ids };
}

export async function exportText(
  db: Opened,
  organizationId: string,
  format: ExportFormat = 'ndjson',
): Promise<string> {
  const chunks: Array<string | Buffer> = [];
  for await (const chunk of exportChunks(readsOf(db.store), organizationId, format, at(60)))
    chunks.push(chunk);
  return Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8');
}

export async function* linesOf(text: string): AsyncGenerator<string> {
  for (const line of text.split('\n')) yield line;
}

/**
 * The sessions of a version 2 NDJSON export, each put back together as one whole object
 * (what a JSON export holds), checking the line structure on the way.
 */
export function sessionLines(ndjson: string): Record<string, unknown>[] {
  const lines = ndjson
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines.at(-1)?.type).toBe('end');
  const sessions: Record<string, unknown>[] = [];
  let open: { whole: Record<string, unknown>; messages: unknown[]; meta: unknown[] } | null = null;
  for (const line of lines.slice(0, -1)) {
    if (line.type === 'session') {
      expect(open).toBeNull();
      SessionHeadSchema.parse(line);
      const { messageCount: _count, ...whole } = line;
      open = { whole, messages: [], meta: [] };
    } else if (line.type === 'message') {
      const { type: _type, message, ...meta } = line;
      open?.messages.push(message);
      open?.meta.push(meta);
    } else {
      expect(line.type).toBe('session-end');
      expect(line.messageCount).toBe(open?.messages.length);
      sessions.push({ ...open?.whole, messages: open?.messages, messageMeta: open?.meta });
      open = null;
    }
  }
  expect(lines.at(-1)?.sessionCount).toBe(sessions.length);
  return sessions;
}

/** The same export in version 1: a whole session per line, no end line. */
export function toVersion1(ndjson: string): string {
  const header = { ...(JSON.parse(ndjson.slice(0, ndjson.indexOf('\n'))) as object), version: 1 };
  return [header, ...sessionLines(ndjson)].map((value) => `${JSON.stringify(value)}\n`).join('');
}

/** What must survive a round trip: everything but the author's id, which is per data directory. */
export function comparable(session: Record<string, unknown>) {
  const { author, ...rest } = session as { author: { id: string } } & Record<string, unknown>;
  const { id: _id, ...authorRest } = author;
  return { ...rest, author: authorRest };
}
