import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type {
  FoundHistoryFolder,
  HistoryImportBody,
  HistorySource,
  HistorySourceReport,
} from '../../src-shared/history.js';
import { HISTORY_KINDS, type HistoryKind } from '../../src-shared/sessions.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { HistorySourceRecord } from '../store/history.js';
import { defaultRoot, importSource } from './importer.js';
import { type HistoryDeps } from './history-deps.js';

/** The folder under a CLI's root that holds its sessions: a root without it has none to import. */
const SESSIONS_FOLDER: Record<HistoryKind, string> = {
  'claude-code': 'projects',
  codex: 'sessions',
  gemini: 'tmp',
};

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
  // Every named folder is checked before anything is imported: an error imports nothing.
  for (const spec of body.sources) {
    if (spec.explicit && !existsSync(resolve(spec.rootDir)))
      throw unreadable(resolve(spec.rootDir), 'no such folder');
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
      skipped: [],
      skippedCount: 0,
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

/**
 * `claude-code: 212 sessions (12 new, 3 updated), 48,113 messages`, or the missing note; then a
 * line for each entry of the folder that was not read (`  skipped <path>: <why>`).
 */
export function formatSourceReport(report: HistorySourceReport): string {
  if (report.missing) return `${report.kind}: no ${report.rootDir}, nothing to import`;
  const n = (value: number) => value.toLocaleString('en-US');
  const lines = [
    `${report.kind}: ${n(report.sessions)} sessions (${n(report.newSessions)} new, ` +
      `${n(report.updatedSessions)} updated), ${n(report.messages)} messages`,
    ...report.skipped.map((skip) => `  skipped ${skip.path}: ${skip.reason}`),
  ];
  const unnamed = report.skippedCount - report.skipped.length;
  if (unnamed > 0) lines.push(`  skipped ${n(unnamed)} more`);
  return lines.join('\n');
}

/**
 * Settings' view of the remembered sources, and an owner's changes to them. Adding one only
 * remembers it: the running server's follower imports it at its next scan. Removing one forgets
 * it and its files' progress; the sessions it imported stay, and the CLI's files are untouched.
 */
export function createHistorySources(deps: HistoryDeps) {
  const { repos, store, clock } = deps;

  function view(record: HistorySourceRecord): HistorySource {
    const author = repos.users.findById(record.authorId);
    const source: HistorySource = {
      id: record.id,
      kind: record.kind,
      rootDir: record.rootDir,
      author: { id: record.authorId, email: author?.email ?? '' },
      paused: record.paused,
      sessions: record.sessionCount,
      messages: record.messageCount,
    };
    if (record.lastImportAt !== undefined) source.lastImportAt = record.lastImportAt;
    return source;
  }

  function find(workspaceId: string, sourceId: string): HistorySourceRecord {
    const record = repos.history.source(sourceId);
    if (!record || record.workspaceId !== workspaceId) throw notFound(`No history source ${sourceId}`);
    return record;
  }

  return {
    list(workspaceId: string): HistorySource[] {
      return repos.history.sources(workspaceId).map(view);
    },

    /**
     * The CLIs' folders in their default places that hold sessions and the workspace does not
     * follow yet: what a person who runs these CLIs in a terminal most likely wants to add.
     */
    found(workspaceId: string, env: NodeJS.ProcessEnv): FoundHistoryFolder[] {
      const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
      const followed = new Set(repos.history.sources(workspaceId).map((s) => `${s.kind}:${s.rootDir}`));
      return HISTORY_KINDS.flatMap((kind) => {
        const rootDir = resolve(defaultRoot(kind, env, home));
        if (followed.has(`${kind}:${rootDir}`)) return [];
        try {
          return statSync(join(rootDir, SESSIONS_FOLDER[kind])).isDirectory() ? [{ kind, rootDir }] : [];
        } catch {
          return [];
        }
      });
    },

    async add(
      workspaceId: string,
      authorId: string,
      kind: HistoryKind,
      rootDir: string,
    ): Promise<HistorySource> {
      if (!isAbsolute(rootDir)) {
        throw badRequest('The folder must be an absolute path', [
          { path: 'body.rootDir', message: 'must be absolute' },
        ]);
      }
      const root = resolve(rootDir);
      try {
        if (!statSync(root).isDirectory()) throw unreadable(root, 'not a folder');
        accessSync(root, constants.R_OK | constants.X_OK);
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw unreadable(root, (err as Error).message);
      }
      const record = await store.write(() => {
        const found = repos.history.findSource(workspaceId, kind, root);
        if (found) return found;
        const created: HistorySourceRecord = {
          id: `hsrc_${randomBytes(16).toString('base64url')}`,
          workspaceId,
          kind,
          rootDir: root,
          authorId,
          paused: false,
          sessionCount: 0,
          messageCount: 0,
          createdAt: clock.now().toISOString(),
        };
        repos.history.insertSource(created);
        return created;
      });
      return view(record);
    },

    async setPaused(workspaceId: string, sourceId: string, paused: boolean): Promise<HistorySource> {
      const record = find(workspaceId, sourceId);
      await store.write(() => repos.history.setPaused(record.id, paused));
      return view({ ...record, paused });
    },

    async remove(workspaceId: string, sourceId: string): Promise<void> {
      const record = find(workspaceId, sourceId);
      await store.write(() => repos.history.removeSource(record.id));
    },
  };
}
export type HistorySources = ReturnType<typeof createHistorySources>;
