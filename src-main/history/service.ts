import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { HistoryImportBody, HistorySourceReport } from '../../src-shared/history.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { HistorySourceRecord } from '../store/history.js';
import { importSource, type HistoryDeps } from './importer.js';

/** A source folder that was named but cannot be read. */
function unreadable(rootDir: string, why: string): AppError {
  return badRequest(`Cannot read ${rootDir}: ${why}`, [{ path: 'rootDir', message: why }]);
}

/**
 * `sessiondesk history import`: checks the workspace and the author (a member; else the
 * workspace's first owner), remembers each source for the workspace (so a running server and
 * every later start follow it), and imports what changed in each.
 */
export async function runHistoryImport(
  deps: HistoryDeps,
  body: HistoryImportBody,
): Promise<HistorySourceReport[]> {
  const { repos, store, clock } = deps;
  const workspace = repos.workspaces.findById(body.organizationId);
  if (!workspace) throw notFound(`No workspace ${body.organizationId}`);
  const members = repos.workspaces.members(workspace.id);
  let authorId: string;
  if (body.authorEmail !== undefined) {
    const email = body.authorEmail.toLowerCase();
    const member = members.find((m) => m.email.toLowerCase() === email);
    if (!member) {
      throw badRequest(`${body.authorEmail} is not a member of ${workspace.id}`, [
        { path: 'authorEmail', message: 'must be a member of the workspace' },
      ]);
    }
    authorId = member.userId;
  } else {
    const owner = members.find((m) => m.role === 'owner');
    if (!owner) throw badRequest(`Workspace ${workspace.id} has no owner to import as; pass --author`);
    authorId = owner.userId;
  }
  const reports: HistorySourceReport[] = [];
  for (const spec of body.sources) {
    const rootDir = resolve(spec.rootDir);
    const report: HistorySourceReport = {
      kind: spec.kind,
      rootDir,
      missing: false,
      sessions: 0,
      newSessions: 0,
      updatedSessions: 0,
      messages: 0,
    };
    if (!existsSync(rootDir)) {
      if (spec.explicit) throw unreadable(rootDir, 'no such folder');
      reports.push({ ...report, missing: true });
      continue;
    }
    try {
      if (!statSync(rootDir).isDirectory()) throw unreadable(rootDir, 'not a folder');
      accessSync(rootDir, constants.R_OK | constants.X_OK);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw unreadable(rootDir, (err as Error).message);
    }
    const source = await store.write((): HistorySourceRecord => {
      const found = repos.history.findSource(workspace.id, spec.kind, rootDir);
      if (found) {
        if (found.authorId !== authorId) repos.history.setAuthor(found.id, authorId);
        return { ...found, authorId };
      }
      const created: HistorySourceRecord = {
        id: `hsrc_${randomBytes(16).toString('base64url')}`,
        workspaceId: workspace.id,
        kind: spec.kind,
        rootDir,
        authorId,
        paused: false,
        sessionCount: 0,
        messageCount: 0,
        createdAt: clock.now().toISOString(),
      };
      repos.history.insertSource(created);
      return created;
    });
    reports.push({ ...report, ...(await importSource(deps, source)) });
  }
  return reports;
}

/** `claude-code: 212 sessions (12 new, 3 updated), 48,113 messages`, or the missing note. */
export function formatSourceReport(report: HistorySourceReport): string {
  if (report.missing) return `${report.kind}: no ${report.rootDir}, nothing to import`;
  const n = (value: number) => value.toLocaleString('en-US');
  return (
    `${report.kind}: ${n(report.sessions)} sessions (${n(report.newSessions)} new, ` +
    `${n(report.updatedSessions)} updated), ${n(report.messages)} messages`
  );
}
