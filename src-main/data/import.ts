import type { Message } from '../../src-shared/sessions.js';
import { parseRepoUrl } from '../../src-shared/repo-url.js';
import { notFound } from '../errors.js';
import { isDatabaseUnavailable } from '../store-postgres/connect.js';
import type { SessionRow } from '../store/session-row.js';
import type { Repos, Storage } from '../store/storage.js';
import { StoreUnavailableError } from '../store/store.js';
import type { ImportReport } from './format.js';
import { openInput } from './import-input.js';
import type { ImportedMessage, ImportedSession } from './import-records.js';
import type { LineTooLong } from './lines.js';

export { ImportInputError } from './import-records.js';

export interface ImportTarget {
  storage: Storage;
  /** Called once an imported session is on disk (the server publishes it to live streams). */
  onImported?: (row: SessionRow) => void;
}

/** Skipped entries listed in a report; the count covers them all. */
const SKIPPED_LISTED = 100;
/** Writes handed to the store before waiting for the oldest: they share fsyncs (group commit). */
const WRITES_IN_FLIGHT = 32;

/** The session is there already (written meanwhile): nothing of this write was applied. */
class AlreadyPresent extends Error {}

/** A session's first write inserts it; every write appends messages; the last completes it. */
export interface Part {
  /** How many messages the session holds before this part; null when it is not there yet. */
  after: number | null;
  messages: ImportedMessage[];
  last: boolean;
}

/**
 * Imports an export into a workspace. Idempotent: a session whose id the workspace holds is
 * left as it is. Each session is checked whole before anything of it is written; invalid
 * ones are skipped and reported with where they are and why. A session is written in
 * bounded batches (one write for most); a session the workspace holds with fewer messages
 * than the export (an import cut off by a crash) is completed from where it stops. Authors
 * are matched by email; a person without an account here is replaced by the workspace's
 * owner, and the report says so. Sessions keep their ids, timestamps, status and agent
 * fields. Throws `ImportInputError` when the input is not an export at all.
 */
export async function importSessions(
  lines: AsyncIterable<string | LineTooLong>,
  organizationId: string,
  target: ImportTarget,
): Promise<ImportReport> {
  const { storage } = target;
  const { repos } = storage;
  if (!(await repos.workspaces.findById(organizationId))) {
    throw notFound(`Workspace ${organizationId} not found`);
  }
  const owner = (await repos.workspaces.members(organizationId)).find((m) => m.role === 'owner');
  if (!owner) throw new Error(`Workspace ${organizationId} has no owner`);

  const input = await openInput(lines);
  const { format, header } = input;
  const report: ImportReport = {
    organizationId,
    format,
    source: {
      organizationId: header.organizationId,
      workspaceName: header.workspace.name,
      exportedAt: header.exportedAt,
    },
    imported: 0,
    messages: 0,
    alreadyPresent: 0,
    skippedCount: 0,
    skipped: [],
  };
  const skipped: { order: number; at: string; reason: string }[] = [];
  const reattributed = new Map<string, number>();
  // Looked up before a session's writes, so that a write never waits on anything but itself.
  const userIds = new Map<string, string | null>();
  const lookUp = async (emails: Iterable<string>): Promise<void> => {
    for (const email of emails) {
      if (!userIds.has(email)) userIds.set(email, (await repos.users.findByEmail(email))?.id ?? null);
    }
  };
  const userIdFor = (email: string): string | null => userIds.get(email) ?? null;

  const inFlight = new Set<Promise<void>>();
  // Set from the writes' callbacks: a disk failure stops the import.
  const stop: { fatal: { at: string; err: unknown } | null } = { fatal: null };
  let found = 0;

  for await (const entry of input.entries) {
    if (entry.kind === 'skip') {
      if (entry.isSession) found += 1;
      skipped.push({ order: entry.order, at: entry.at, reason: entry.reason });
      continue;
    }
    found += 1;
    const { session } = entry;
    if (stop.fatal) {
      await session.discard();
      break;
    }
    const skip = (reason: string) => skipped.push({ order: entry.order, at: entry.at, reason });
    const existing = await repos.sessions.find(session.head.id);
    const otherWorkspace = `session ${session.head.id} already exists in another workspace`;
    if (
      existing &&
      (existing.workspaceId !== organizationId || existing.messageCount >= session.messageCount)
    ) {
      if (existing.workspaceId === organizationId) report.alreadyPresent += 1;
      else skip(otherWorkspace);
      await session.discard();
      continue;
    }

    // Whoever has no account here becomes the owner; counted once per session.
    const missing = new Set<string>();
    await lookUp([session.head.author.email]);
    const authorId =
      userIdFor(session.head.author.email) ?? (missing.add(session.head.author.email), owner.userId);
    const personFor = (message: ImportedMessage): string | null => {
      if (message.sender === null) return null;
      if (message.sender === 'session-author') return authorId;
      const id = userIdFor(message.sender.email);
      if (id !== null) return id;
      missing.add(message.sender.email);
      return owner.userId;
    };
    const writePart = async (part: Part) => {
      await lookUp(senders(part.messages));
      return storage.write(async (tx) => {
        const row = await tx.sessions.find(session.head.id);
        if ((row?.messageCount ?? null) !== part.after || (row && row.workspaceId !== organizationId)) {
          throw new AlreadyPresent();
        }
        await writeSessionPart(tx, organizationId, session, part, authorId, personFor);
        return part.last ? tx.sessions.find(session.head.id) : null;
      });
    };
    const done = (row: SessionRow | null) => {
      report.imported += 1;
      report.messages += session.messageCount - (existing?.messageCount ?? 0);
      for (const email of missing) reattributed.set(email, (reattributed.get(email) ?? 0) + 1);
      if (row) target.onImported?.(row);
    };
    const failed = async (err: unknown, written: number) => {
      if (err instanceof AlreadyPresent) {
        const row = await repos.sessions.find(session.head.id);
        if (row?.workspaceId === organizationId) report.alreadyPresent += 1;
        else skip(otherWorkspace);
      } else if (err instanceof StoreUnavailableError || isDatabaseUnavailable(err)) {
        stop.fatal ??= { at: entry.at, err };
      } else {
        const why = err instanceof Error ? err.message : String(err);
        skip(
          written > 0
            ? `could not be written after ${written} of its ${session.messageCount} messages (${why}); ` +
                'import the file again to add the rest'
            : `could not be written (${why})`,
        );
      }
    };

    const after = existing?.messageCount ?? null;
    const from = after ?? 0;
    if (session.small) {
      // One write, handed to the store without waiting: concurrent writes share their fsyncs.
      const messages = (await collect(session.batches(from))).flat();
      const write = writePart({ after, messages, last: true })
        .then(done, (err: unknown) => failed(err, from))
        .finally(() => inFlight.delete(write));
      inFlight.add(write);
      if (inFlight.size >= WRITES_IN_FLIGHT) await Promise.race(inFlight);
      continue;
    }
    // A big session: its batches one after the other, each waiting for the one before.
    let written = from;
    try {
      const batches = session.batches(from);
      let current = await batches.next();
      if (current.done) {
        done(await writePart({ after, messages: [], last: true }));
      }
      while (!current.done) {
        const following = await batches.next();
        const part = {
          after: written === from ? after : written,
          messages: current.value,
          last: following.done === true,
        };
        const row = await writePart(part);
        written += part.messages.length;
        if (part.last) done(row);
        current = following;
      }
    } catch (err) {
      await failed(err, written);
    } finally {
      await session.discard();
    }
  }
  await Promise.all(inFlight);

  const fatal = stop.fatal;
  // A team database out of reach is answered as such (503, try again); the same import again adds the rest.
  if (fatal && isDatabaseUnavailable(fatal.err)) throw fatal.err;
  if (fatal) {
    const why = fatal.err instanceof Error ? fatal.err.message : String(fatal.err);
    throw new StoreUnavailableError(
      `The import stopped at ${fatal.at}: ${why} ${report.imported} sessions were imported before it; ` +
        'run the same import again once the disk is fine, and it adds only the rest.',
      { cause: fatal.err },
    );
  }

  skipped.sort((a, b) => a.order - b.order);
  report.skippedCount = skipped.length;
  report.skipped = skipped.slice(0, SKIPPED_LISTED).map(({ at, reason }) => ({ at, reason }));
  if (reattributed.size > 0) {
    report.reattributed = {
      ownerEmail: owner.email,
      authors: [...reattributed].map(([email, sessions]) => ({ email, sessions })),
    };
  }
  const announced = header.sessionCount;
  if (announced !== undefined && (found < announced || input.ended() === false)) {
    report.truncated = { announced, found };
  }
  return report;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Who sent a part's messages, by email: whom the import looks up before writing it. */
function senders(messages: ImportedMessage[]): Set<string> {
  const emails = new Set<string>();
  for (const { sender } of messages) {
    if (sender !== null && sender !== 'session-author') emails.add(sender.email);
  }
  return emails;
}

/**
 * Writes one part of a session with the repository's own writes, in the order the app
 * makes them, so counts, previews and the stats' bookkeeping come out as they would have.
 * Runs inside a write (`tx`), on either database.
 */
export async function writeSessionPart(
  tx: Repos,
  workspaceId: string,
  session: Pick<ImportedSession, 'head'>,
  part: Part,
  authorId: string,
  personFor: (message: ImportedMessage) => string | null,
): Promise<void> {
  const { head } = session;
  const messages = part.messages;
  let skipFirst = false;
  if (part.after === null) {
    const repo = head.repoUrl === undefined ? null : parseRepoUrl(head.repoUrl);
    // The prompt a session was created with is its first message, sent by its author at its
    // creation; it is also what searches match as the first message.
    const first = messages[0];
    const initial =
      first?.body.type === 'user' &&
      first.createdAt === head.createdAt &&
      personFor(first) === authorId &&
      JSON.stringify(first.body) ===
        JSON.stringify({ type: 'user', message: { content: first.body.message.content } })
        ? first.body.message.content
        : undefined;
    await tx.sessions.insert({
      id: head.id,
      workspaceId,
      authorId,
      title: head.title,
      model: head.model,
      createdAt: head.createdAt,
      baseBranch: head.baseBranch,
      ...(repo ? { repoUrl: repo.url, repository: repo.repository } : {}),
      ...(initial === undefined ? {} : { initialMessage: initial }),
    });
    skipFirst = initial !== undefined;
  }
  for (const [i, message] of messages.entries()) {
    if (i === 0 && skipFirst) continue;
    await tx.sessions.appendMessage(
      head.id,
      workspaceId,
      message.body as Message,
      personFor(message),
      message.createdAt,
    );
  }
  if (!part.last) return;
  await tx.sessions.replaceTasks(head.id, head.tasks);
  const { branch, prNumber, prUrl, prStatus } = head.metadata;
  if (branch !== undefined) await tx.sessions.setBranch(head.id, branch, head.updatedAt);
  if (prNumber !== undefined && prUrl !== undefined && prStatus !== undefined) {
    await tx.sessions.updatePullRequest(
      head.id,
      {
        number: prNumber,
        url: prUrl,
        status: prStatus,
        ...(head.prMergedAt === undefined ? {} : { mergedAt: head.prMergedAt }),
      },
      head.updatedAt,
    );
  }
  await tx.sessions.setAgentFields(head.id, workspaceId, head);
  // Last, so the session ends with its own status and updatedAt.
  await tx.sessions.update(head.id, { status: head.status }, head.updatedAt);
}

/** The report as the CLI prints it: a summary line, then what was skipped and why. */
export function formatImportReport(report: ImportReport): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const summary = [`imported ${plural(report.imported, 'session')} (${plural(report.messages, 'message')})`];
  if (report.alreadyPresent > 0) summary.push(`${report.alreadyPresent} already present`);
  summary.push(`skipped ${report.skippedCount}`);
  const lines = [
    `${summary.join(', ')}${report.skippedCount > 0 ? ':' : ''}`,
    ...report.skipped.map((s) => `  ${s.at}: ${s.reason}`),
  ];
  const unlisted = report.skippedCount - report.skipped.length;
  if (unlisted > 0) lines.push(`  … and ${unlisted} more`);
  lines.push(
    `into ${report.organizationId}, from "${report.source.workspaceName}" (${report.source.organizationId}, ` +
      `exported ${report.source.exportedAt}, ${report.format.toUpperCase()})`,
  );
  if (report.alreadyPresent > 0) {
    lines.push(`${plural(report.alreadyPresent, 'session')} already here (same id) were left as they were.`);
  }
  if (report.reattributed) {
    const { ownerEmail, authors } = report.reattributed;
    const total = authors.reduce((n, a) => n + a.sessions, 0);
    lines.push(
      `${authors.length === 1 ? 'One person has' : `${authors.length} people have`} no account here; ` +
        `${plural(total, 'session')} of theirs ${total === 1 ? 'is' : 'are'} attributed to the workspace ` +
        `owner ${ownerEmail}: ${authors.map((a) => `${a.email} (${a.sessions})`).join(', ')}.`,
    );
  }
  if (report.truncated) {
    const { announced, found } = report.truncated;
    lines.push(
      found < announced
        ? `warning: the export announced ${announced} sessions but holds ${found}: it may have been cut short.`
        : 'warning: the export has no end line: it may have been cut short.',
    );
  }
  return lines.join('\n');
}
