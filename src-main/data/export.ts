import { toSummary } from '../sessions/summary.js';
import type { Repositories } from '../store/repositories.js';
import { optStr, str } from '../store/row.js';
import type { Db } from '../store/sqljs.js';
import type { ListPosition } from '../store/sessions.js';
import { EXPORT_TYPE, EXPORT_VERSION, type ExportFormat, type ExportHeader } from './format.js';

/** Sessions read per query; each is serialized (and re-read) only when its turn comes. */
const PAGE = 100;

export interface ExportSource {
  db: Db;
  repos: Repositories;
}

/**
 * One session in the export form, as JSON text. Everything is read in one synchronous step,
 * so a session is exported as it was at one instant even while a server keeps writing.
 * Message bodies are spliced in as stored (they were validated when written).
 */
export function exportSessionJson(
  source: ExportSource,
  sessionId: string,
  emails: Map<string, string>,
): string | null {
  const { db, repos } = source;
  const row = repos.sessions.find(sessionId);
  const input = repos.sessions.agentInput(sessionId);
  if (!row || !input) return null;
  const emailOf = (userId: string): string => {
    let email = emails.get(userId);
    if (email === undefined) {
      email = repos.users.findById(userId)?.email ?? '';
      emails.set(userId, email);
    }
    return email;
  };
  const { messageCount: _count, ...summary } = toSummary(row, 'none');
  const prMergedAt = optStr(db.first('SELECT pr_merged_at FROM sessions WHERE id = ?', [sessionId])?.[0]);
  const messageMeta = db
    .all('SELECT created_at, author_id FROM messages WHERE session_id = ? ORDER BY seq', [sessionId])
    .map((r) => {
      const authorId = optStr(r[1]);
      return {
        createdAt: str(r[0]),
        ...(authorId === undefined ? {} : { authorEmail: emailOf(authorId) }),
      };
    });
  const head = JSON.stringify({
    type: 'session',
    ...summary,
    author: { ...summary.author, email: emailOf(row.authorId) },
    ...(input.repoUrl === undefined ? {} : { repoUrl: input.repoUrl }),
    baseBranch: input.baseBranch,
    ...(prMergedAt === undefined ? {} : { prMergedAt }),
    tasks: repos.sessions.tasks(sessionId),
    messageMeta,
  });
  return `${head.slice(0, -1)},"messages":[${repos.sessions.messageBodies(sessionId).join(',')}]}`;
}

/**
 * A workspace's export, piece by piece (the header, then one session per piece), so that
 * neither the server nor the CLI ever holds more than one session of it in memory. Pieces
 * are produced only when asked for: a consumer that waits for its output to drain holds
 * the reading back. Sessions come newest first, and each page continues after the last
 * session seen, so none is missed or repeated while a server keeps writing; the header's
 * `sessionCount` is the number when the export started.
 */
export function* exportChunks(
  source: ExportSource,
  organizationId: string,
  format: ExportFormat,
  exportedAt: string,
): Generator<string, void, undefined> {
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
  while (page.length > 0) {
    for (const row of page) {
      const json = exportSessionJson(source, row.id, emails);
      if (json === null) continue;
      if (format === 'ndjson') yield `${json}\n`;
      else yield `${first ? '\n' : ',\n'}${json}`;
      first = false;
    }
    const last = page.at(-1) as { createdAt: string; id: string };
    const after: ListPosition = { createdAt: last.createdAt, id: last.id };
    page = source.repos.sessions.list(organizationId, {}, { limit: PAGE, after });
  }
  if (format === 'json') yield `${first ? '' : '\n'}]}\n`;
}
