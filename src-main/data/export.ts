import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { toSummary } from '../sessions/summary.js';
import type { SessionRow } from '../store/session-row.js';
import { TRANSCRIPT_MAGIC } from '../store/transcript-format.js';
import { settledRow, type TranscriptReads } from '../sessions/transcript-reads.js';
import type { ListPosition } from '../store/session-listing.js';
import { EXPORT_TYPE, EXPORT_VERSION, type ExportFormat, type ExportHeader } from './format.js';

/**
 * The folder a session ran in on this machine, where its changes are: its sandbox while it is
 * there, else the folder its agent CLI ran in (an imported session), else the one a desktop
 * named when it pushed it here.
 */
async function folderOf(row: SessionRow, sandboxRoot: string | undefined): Promise<string | undefined> {
  if (sandboxRoot !== undefined) {
    const sandbox = join(sandboxRoot, row.id);
    const there = await stat(sandbox).then(
      (info) => info.isDirectory(),
      () => false,
    );
    if (there) return sandbox;
  }
  return row.source?.cwd ?? row.pushedFrom?.folder;
}

/** Sessions read per query; each is serialized (and re-read) only when its turn comes. */
const PAGE = 100;

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
  source: TranscriptReads,
  sessionId: string,
  emails: Map<string, string>,
  format: ExportFormat = 'ndjson',
  sandboxRoot?: string,
): AsyncGenerator<string | Buffer> {
  // Everything but the messages is read at the instant the row is, with its length: started
  // together, so on sql.js no write comes between them, and on PostgreSQL in one snapshot.
  const settled = await settledRow(source, sessionId, async (_row, repos) => {
    const [input, prMergedAt, tasks, authors, conversation, runs, approvals] = await Promise.all([
      repos.sessions.agentInput(sessionId),
      repos.sessions.pullRequestMergedAt(sessionId),
      repos.sessions.tasks(sessionId),
      repos.sessions.promptAuthors(sessionId),
      repos.sessions.conversation(sessionId),
      repos.sessions.runs(sessionId),
      repos.approvals.ofSession(sessionId),
    ]);
    return input && { input, prMergedAt, tasks, authors, conversation, runs, approvals };
  });
  if (!settled?.also) return;
  const { row } = settled;
  const { input, prMergedAt, tasks, authors, conversation, runs } = settled.also;
  const approvals = settled.also.approvals.map(
    ({ workspaceId: _workspace, sessionId: _session, ...approval }) => approval,
  );
  // Looked up before the first piece, so that the messages below name them without waiting.
  for (const userId of new Set([row.authorId, ...authors.values()])) {
    if (!emails.has(userId))
      emails.set(userId, (await source.storage.repos.users.findById(userId))?.email ?? '');
  }
  const emailOf = (userId: string): string => emails.get(userId) ?? '';
  const folder = await folderOf(row, sandboxRoot);
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
    ...(folder === undefined ? {} : { folder }),
  };
  const messages = source.transcripts.readPayloads(row.id, TRANSCRIPT_MAGIC.length, row.transcriptBytes);
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
  source: TranscriptReads,
  organizationId: string,
  format: ExportFormat,
  exportedAt: string,
  /** Where this machine's sessions ran: each session's sandbox is a folder of it. */
  sandboxRoot?: string,
): AsyncGenerator<string | Buffer, void, undefined> {
  const { repos } = source.storage;
  const workspace = await repos.workspaces.findById(organizationId);
  if (!workspace) throw new Error(`Workspace ${organizationId} not found`);
  const sessionCount = await repos.sessions.count(organizationId, {});
  const header: ExportHeader = {
    type: EXPORT_TYPE,
    version: EXPORT_VERSION,
    organizationId,
    workspace: { name: workspace.name },
    exportedAt,
    sessionCount,
  };
  let page = await repos.sessions.list(organizationId, {}, { limit: PAGE });
  const headerJson = JSON.stringify(header);
  yield format === 'ndjson' ? `${headerJson}\n` : `${headerJson.slice(0, -1)},"sessions":[`;

  const emails = new Map<string, string>();
  let first = true;
  let exported = 0;
  while (page.length > 0) {
    for (const row of page) {
      if (format === 'json') yield first ? '\n' : ',\n';
      yield* exportSession(source, row.id, emails, format, sandboxRoot);
      first = false;
      exported += 1;
    }
    const last = page.at(-1) as { createdAt: string; id: string };
    const after: ListPosition = { createdAt: last.createdAt, id: last.id };
    page = await repos.sessions.list(organizationId, {}, { limit: PAGE, after });
  }
  if (format === 'json') yield `${first ? '' : '\n'}]}\n`;
  else yield `${JSON.stringify({ type: 'end', sessionCount: exported })}\n`;
}
