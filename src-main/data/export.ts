import { toSummary } from '../sessions/summary.js';
import type { Repositories } from '../store/repositories.js';
import { optStr } from '../store/row.js';
import type { Db } from '../store/sqljs.js';
import type { Store } from '../store/store.js';
import { TRANSCRIPT_MAGIC } from '../store/transcript-format.js';
import { settledRow } from '../sessions/transcript-reads.js';
import { readsOf } from '../store/sqljs-storage.js';
import type { ListPosition } from '../store/session-listing.js';
import { readApprovals, readRuns } from './agent-fields.js';
import { EXPORT_TYPE, EXPORT_VERSION, type ExportFormat, type ExportHeader } from './format.js';

/** Sessions read per query; each is serialized (and re-read) only when its turn comes. */
const PAGE = 100;

export interface ExportSource {
  store: Store;
  db: Db;
  repos: Repositories;
}

/**
 * One session in the export form, as pieces of JSON text: in NDJSON (version 2) its
 * `session` line, a `message` line per message and its `session-end` line; in JSON one
 * whole object. Its row, tasks, runs and prompt authors are read at one instant (once its
 * transcript holds every committed byte), and its messages are then copied from the
 * transcript up to the length counted at that instant, so a session is exported as it was
 * even while a server keeps writing. Message bodies are copied as stored (they were
 * validated when written), never held whole.
 */
export async function* exportSession(
  source: ExportSource,
  sessionId: string,
  emails: Map<string, string>,
  format: ExportFormat = 'ndjson',
): AsyncGenerator<string | Buffer> {
  const { db, repos } = source;
  // Everything but the messages is read at the instant the row is, with its length.
  const reads = readsOf(source.store);
  const settled = await settledRow(reads, sessionId, () => {
    const input = repos.sessions.agentInput(sessionId);
    if (!input) return null;
    const prMergedAt = optStr(db.first('SELECT pr_merged_at FROM sessions WHERE id = ?', [sessionId])?.[0]);
    return {
      input,
      prMergedAt,
      tasks: repos.sessions.tasks(sessionId),
      authors: repos.sessions.promptAuthors(sessionId),
      conversation: repos.sessions.conversation(sessionId),
      runs: readRuns(db, sessionId),
      approvals: readApprovals(db, sessionId),
    };
  });
  if (!settled?.also) return;
  const { row } = settled;
  const { input, prMergedAt, tasks, authors, conversation, runs, approvals } = settled.also;
  const emailOf = (userId: string): string => {
    let email = emails.get(userId);
    if (email === undefined) {
      email = repos.users.findById(userId)?.email ?? '';
      emails.set(userId, email);
    }
    return email;
  };
  const { messageCount, ...summary } = toSummary(row, 'none');
  const head = {
    type: 'session',
    ...summary,
    author: { ...summary.author, email: emailOf(row.authorId) },
    ...(input.repoUrl === undefined ? {} : { repoUrl: input.repoUrl }),
    baseBranch: input.baseBranch,
    ...(prMergedAt === undefined ? {} : { prMergedAt }),
    tasks,
    ...(conversation === null ? {} : { conversation }),
    runs,
    ...(approvals.length === 0 ? {} : { approvals }),
  };
  const messages = reads.transcripts.readPayloads(row.id, TRANSCRIPT_MAGIC.length, row.transcriptBytes);
  /** When the message was added, and by whom if a person sent it. */
  const metaOf = (index: number, createdAtMs: number) => {
    const authorId = authors.get(index + 1);
    return {
      createdAt: new Date(createdAtMs).toISOString(),
      ...(authorId === undefined ? {} : { authorEmail: emailOf(authorId) }),
    };
  };

  if (format === 'ndjson') {
    yield `${JSON.stringify({ ...head, messageCount })}\n`;
    for await (const piece of messages) {
      if (piece.first) {
        const line = JSON.stringify({ type: 'message', ...metaOf(piece.index, piece.createdAtMs) });
        yield `${line.slice(0, -1)},"message":`;
      }
      yield piece.bytes;
      if (piece.end) yield '}\n';
    }
    yield `${JSON.stringify({ type: 'session-end', id: row.id, messageCount })}\n`;
    return;
  }

  yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
  const meta: string[] = [];
  for await (const piece of messages) {
    if (piece.first) {
      if (piece.index > 0) yield ',';
      meta.push(JSON.stringify(metaOf(piece.index, piece.createdAtMs)));
    }
    yield piece.bytes;
  }
  // After the messages, whose times come from their transcript frames as they are read.
  yield `],"messageMeta":[${meta.join(',')}]}`;
}

/**
 * A workspace's export, piece by piece (the header, then one session per piece), so that
 * neither the server nor the CLI ever holds more than one session of it in memory. Pieces
 * are produced only when asked for: a consumer that waits for its output to drain holds
 * the reading back. Sessions come newest first, and each page continues after the last
 * session seen, so none is missed or repeated while a server keeps writing; the header's
 * `sessionCount` is the number when the export started.
 */
export async function* exportChunks(
  source: ExportSource,
  organizationId: string,
  format: ExportFormat,
  exportedAt: string,
): AsyncGenerator<string | Buffer, void, undefined> {
  const workspace = source.repos.workspaces.findById(organizationId);
  if (!workspace) throw new Error(`Workspace ${organizationId} not found`);
  const sessionCount = Number(
    source.db.first('SELECT count(*) FROM sessions WHERE workspace_id = ?', [organizationId])?.[0] ?? 0,
  );
  const header: ExportHeader = {
    type: EXPORT_TYPE,
    version: EXPORT_VERSION,
    organizationId,
    workspace: { name: workspace.name },
    exportedAt,
    sessionCount,
  };
  let page = source.repos.sessions.list(organizationId, {}, { limit: PAGE });
  const headerJson = JSON.stringify(header);
  yield format === 'ndjson' ? `${headerJson}\n` : `${headerJson.slice(0, -1)},"sessions":[`;

  const emails = new Map<string, string>();
  let first = true;
  let exported = 0;
  while (page.length > 0) {
    for (const row of page) {
      if (format === 'json') yield first ? '\n' : ',\n';
      yield* exportSession(source, row.id, emails, format);
      first = false;
      exported += 1;
    }
    const last = page.at(-1) as { createdAt: string; id: string };
    const after: ListPosition = { createdAt: last.createdAt, id: last.id };
    page = source.repos.sessions.list(organizationId, {}, { limit: PAGE, after });
  }
  if (format === 'json') yield `${first ? '' : '\n'}]}\n`;
  else yield `${JSON.stringify({ type: 'end', sessionCount: exported })}\n`;
}
