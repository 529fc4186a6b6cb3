import type { Message } from '../../src-shared/sessions.js';
import { parseRepoUrl } from '../../src-shared/repo-url.js';
import { notFound } from '../errors.js';
import type { Repositories } from '../store/repositories.js';
import type { SessionRow } from '../store/sessions.js';
import { StoreUnavailableError, type Store } from '../store/store.js';
import {
  describeIssues,
  EXPORT_TYPE,
  EXPORT_VERSION,
  ExportHeaderSchema,
  ExportSessionSchema,
  type ExportFormat,
  type ExportHeader,
  type ExportSession,
  type ImportReport,
} from './format.js';
import { LineTooLong, MAX_LINE_BYTES } from './lines.js';

/** The input is not an export at all (or one this version cannot read): nothing was imported. */
export class ImportInputError extends Error {}

export interface ImportTarget {
  store: Store;
  repos: Repositories;
  /** Called once an imported session is on disk (the server publishes it to live streams). */
  onImported?: (row: SessionRow) => void;
}

/** Skipped entries listed in a report; the count covers them all. */
const SKIPPED_LISTED = 100;
/** A JSON export is read whole; beyond this, NDJSON (read line by line) is the way. */
const JSON_DOCUMENT_MAX_CHARS = 128 * 2 ** 20;
/** Writes handed to the store before waiting for the oldest: they share fsyncs (group commit). */
const WRITES_IN_FLIGHT = 32;

interface Entry {
  /** Where it is in the input: `line 5` (NDJSON) or `session 3` (JSON). */
  at: string;
  order: number;
  parse(): unknown;
}

class AlreadyPresent extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseHeader(value: unknown): ExportHeader {
  if (isObject(value) && value.type === EXPORT_TYPE && value.version !== EXPORT_VERSION) {
    throw new ImportInputError(
      `The export is in format version ${JSON.stringify(value.version)}; this Session Desk reads version ` +
        `${EXPORT_VERSION}. Update Session Desk to import it.`,
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

/**
 * Reads the input's format and header, and yields its sessions one by one. NDJSON is read
 * line by line; a JSON document is read whole (use NDJSON for very large workspaces).
 */
async function openInput(
  lines: AsyncIterable<string | LineTooLong>,
): Promise<{ format: ExportFormat; header: ExportHeader; entries: AsyncGenerator<Entry> }> {
  const iterator = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  let firstLine: string | null = null;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    lineNo += 1;
    if (next.value instanceof LineTooLong) throw tooLong(next.value);
    const line = lineNo === 1 ? next.value.replace(/^\uFEFF/u, '') : next.value;
    if (line.trim() !== '') {
      firstLine = line;
      break;
    }
  }
  if (firstLine === null) throw new ImportInputError('The input is empty: not a Session Desk export.');

  const first = parseJson(firstLine);
  if (first.ok && isObject(first.value) && !('sessions' in first.value)) {
    const header = parseHeader(first.value);
    async function* ndjson(): AsyncGenerator<Entry> {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        lineNo += 1;
        const text = next.value;
        if (text instanceof LineTooLong) {
          const why = `${text.bytes} bytes long, over the ${MAX_LINE_BYTES / 2 ** 20} MiB a session may take`;
          yield {
            at: `line ${lineNo}`,
            order: lineNo,
            parse: () => {
              throw new Error(why);
            },
          };
          continue;
        }
        if (text.trim() === '') continue;
        yield { at: `line ${lineNo}`, order: lineNo, parse: () => parseJsonOrThrow(text) };
      }
    }
    return { format: 'ndjson', header, entries: ndjson() };
  }

  // Not a header line: the whole input must be one JSON document, an object.
  const notAnExport = (why: string) =>
    new ImportInputError(
      `The input is not a Session Desk export: neither NDJSON that starts with a header line nor a JSON ` +
        `document (${why}).`,
    );
  if (!firstLine.trimStart().startsWith('{')) throw notAnExport('it does not start with "{"');
  let text = firstLine;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    if (next.value instanceof LineTooLong) throw tooLong(next.value);
    if (text.length + next.value.length + 1 > JSON_DOCUMENT_MAX_CHARS) {
      throw new ImportInputError(
        `The input is a JSON document over ${JSON_DOCUMENT_MAX_CHARS / 2 ** 20} MiB, too large to read ` +
          'whole: export the workspace as NDJSON (the default), which is read line by line.',
      );
    }
    text += `\n${next.value}`;
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
      yield { at: `session ${index}`, order: index, parse: () => value };
    }
  }
  return { format: 'json', header, entries: json() };
}

function tooLong(line: LineTooLong): ImportInputError {
  return new ImportInputError(
    `The input is not a Session Desk export it can read: it has a line of ${line.bytes} bytes, over the ` +
      `${MAX_LINE_BYTES / 2 ** 20} MiB limit.`,
  );
}

function parseJsonOrThrow(text: string): unknown {
  const parsed = parseJson(text);
  if (!parsed.ok) throw new SyntaxError(`not JSON (${parsed.why})`);
  return parsed.value;
}

/**
 * Imports an export into a workspace. Idempotent: a session whose id the workspace holds is
 * left as it is. Each session is validated, then written as one store write, so it is
 * imported whole or not at all; invalid ones are skipped and reported with where they are
 * and why. Authors are matched by email; a person without an account here is replaced by
 * the workspace's owner, and the report says so. Sessions keep their ids, timestamps and
 * status. Throws `ImportInputError` when the input is not an export at all.
 */
export async function importSessions(
  lines: AsyncIterable<string | LineTooLong>,
  organizationId: string,
  target: ImportTarget,
): Promise<ImportReport> {
  const { store, repos } = target;
  if (!repos.workspaces.findById(organizationId)) throw notFound(`Workspace ${organizationId} not found`);
  const owner = repos.workspaces.members(organizationId).find((m) => m.role === 'owner');
  if (!owner) throw new Error(`Workspace ${organizationId} has no owner`);

  const { format, header, entries } = await openInput(lines);
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
  const skip = (entry: Entry, reason: string) => skipped.push({ order: entry.order, at: entry.at, reason });
  const reattributed = new Map<string, number>();
  const userIds = new Map<string, string | null>();
  const userIdFor = (email: string): string | null => {
    if (!userIds.has(email)) userIds.set(email, repos.users.findByEmail(email)?.id ?? null);
    return userIds.get(email) ?? null;
  };

  const inFlight = new Set<Promise<void>>();
  // Set from the writes' callbacks: a disk failure stops the import.
  const stop: { fatal: { at: string; err: unknown } | null } = { fatal: null };
  let found = 0;

  for await (const entry of entries) {
    if (stop.fatal) break;
    found += 1;
    let value: unknown;
    try {
      value = entry.parse();
    } catch (err) {
      skip(entry, err instanceof Error ? err.message : String(err));
      continue;
    }
    if (isObject(value) && value.type === EXPORT_TYPE) {
      found -= 1;
      skip(entry, 'a second export header: only one is allowed, at the start');
      continue;
    }
    const parsed = ExportSessionSchema.safeParse(value);
    if (!parsed.success) {
      skip(entry, describeIssues(parsed.error));
      continue;
    }
    const session = parsed.data;
    const existing = repos.sessions.find(session.id);
    if (existing) {
      if (existing.workspaceId === organizationId) report.alreadyPresent += 1;
      else skip(entry, `session ${session.id} already exists in another workspace`);
      continue;
    }

    // Whoever has no account here becomes the owner; counted once per session.
    const missing = new Set<string>();
    const personFor = (email: string): string => {
      const id = userIdFor(email);
      if (id !== null) return id;
      missing.add(email);
      return owner.userId;
    };
    const authorId = personFor(session.author.email);
    const promptAuthors = session.messages.map((message, i) => {
      if (message.type !== 'user') return null;
      const meta = session.messageMeta?.[i];
      if (!meta) return authorId;
      return meta.authorEmail === undefined ? null : personFor(meta.authorEmail.toLowerCase());
    });
    // Message bodies are kept as they came (validated above), unknown extra fields included.
    const bodies = (value as { messages: Message[] }).messages;

    const write = store
      .write(() => {
        if (repos.sessions.find(session.id)) throw new AlreadyPresent();
        writeSession(repos, organizationId, session, bodies, authorId, promptAuthors);
        return repos.sessions.find(session.id);
      })
      .then(
        (row) => {
          report.imported += 1;
          report.messages += session.messages.length;
          for (const email of missing) reattributed.set(email, (reattributed.get(email) ?? 0) + 1);
          if (row) target.onImported?.(row);
        },
        (err: unknown) => {
          if (err instanceof AlreadyPresent) {
            const row = repos.sessions.find(session.id);
            if (row?.workspaceId === organizationId) report.alreadyPresent += 1;
            else skip(entry, `session ${session.id} already exists in another workspace`);
          } else if (err instanceof StoreUnavailableError) {
            stop.fatal ??= { at: entry.at, err };
          } else {
            skip(entry, `could not be written (${err instanceof Error ? err.message : String(err)})`);
          }
        },
      )
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
    if (inFlight.size >= WRITES_IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);

  const fatal = stop.fatal;
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
  if (header.sessionCount !== undefined && found < header.sessionCount) {
    report.truncated = { announced: header.sessionCount, found };
  }
  return report;
}

/**
 * Rebuilds one session with the repository's own writes, in the order the app makes
 * them, so counts, previews and the stats' bookkeeping come out as they would have.
 * Runs inside a store write.
 */
function writeSession(
  repos: Repositories,
  workspaceId: string,
  session: ExportSession,
  bodies: Message[],
  authorId: string,
  promptAuthors: (string | null)[],
): void {
  const times = session.messages.map((_, i) => session.messageMeta?.[i]?.createdAt ?? session.createdAt);
  const repo = session.repoUrl === undefined ? null : parseRepoUrl(session.repoUrl);
  // The prompt a session was created with is its first message, sent by its author at its
  // creation; it is also what searches match as the first message.
  const first = bodies[0];
  const initial =
    first?.type === 'user' &&
    times[0] === session.createdAt &&
    promptAuthors[0] === authorId &&
    JSON.stringify(first) === JSON.stringify({ type: 'user', message: { content: first.message.content } })
      ? first.message.content
      : undefined;
  repos.sessions.insert({
    id: session.id,
    workspaceId,
    authorId,
    title: session.title,
    model: session.model,
    createdAt: session.createdAt,
    baseBranch: session.baseBranch,
    ...(repo ? { repoUrl: repo.url, repository: repo.repository } : {}),
    ...(initial === undefined ? {} : { initialMessage: initial }),
  });
  bodies.forEach((message, i) => {
    if (i === 0 && initial !== undefined) return;
    repos.sessions.appendMessage(
      session.id,
      workspaceId,
      message,
      promptAuthors[i] ?? null,
      times[i] as string,
    );
  });
  repos.sessions.replaceTasks(session.id, session.tasks);
  const { branch, prNumber, prUrl, prStatus } = session.metadata;
  if (branch !== undefined) repos.sessions.setBranch(session.id, branch, session.updatedAt);
  if (prNumber !== undefined && prUrl !== undefined && prStatus !== undefined) {
    repos.sessions.updatePullRequest(
      session.id,
      {
        number: prNumber,
        url: prUrl,
        status: prStatus,
        ...(session.prMergedAt === undefined ? {} : { mergedAt: session.prMergedAt }),
      },
      session.updatedAt,
    );
  }
  // Last, so the session ends with its own status and updatedAt.
  repos.sessions.update(session.id, { status: session.status }, session.updatedAt);
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
    lines.push(
      `warning: the export announced ${report.truncated.announced} sessions but holds ` +
        `${report.truncated.found}: it may have been cut short.`,
    );
  }
  return lines.join('\n');
}
