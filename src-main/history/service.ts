import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  FoundHistoryFolder,
  HistoryImportBody,
  HistorySource,
  HistorySourceReport,
} from '../../src-shared/history.js';
import { HISTORY_KINDS, type HistoryKind } from '../../src-shared/sessions.js';
import { createDirectory } from '../accounts/directory.js';
import { badRequest, notFound } from '../errors.js';
import { defaultDataDir, shellWord } from '../paths.js';
import type { HistorySourceRecord } from '../store/history.js';
import type { Store } from '../store/store.js';
import { defaultRoot, importSource, type ImportOptions } from './importer.js';
import { type HistoryDeps } from './history-deps.js';
import { checkSourceFolder, expandHome, SourceFolderRefused, type FolderRules } from './source-folder.js';

/** checkSourceFolder, its refusal a 400 whose message is the reason (and `field`'s detail). */
async function checkedFolder(
  kind: HistoryKind,
  named: string,
  rules: FolderRules,
  options: { shape: boolean; field?: string },
): Promise<string> {
  try {
    return await checkSourceFolder(kind, named, rules, options);
  } catch (err) {
    if (!(err instanceof SourceFolderRefused)) throw err;
    throw badRequest(
      err.message,
      options.field ? [{ path: options.field, message: err.message }] : undefined,
    );
  }
}

/** A CLI's default place, in full. */
const defaultPlace = (rootDir: string, rules: FolderRules) => resolve(expandHome(rootDir, rules.home));

/**
 * `sessiondesk history import`: checks the workspace and the author (a member; else the
 * workspace's first owner), remembers each source for the workspace (so a running server and
 * every later start follow it), and imports what changed in each.
 */
export async function runHistoryImport(
  deps: HistoryDeps & { store: Store },
  body: HistoryImportBody,
  rules: FolderRules,
  options: Pick<ImportOptions, 'turnMs'> = {},
): Promise<HistorySourceReport[]> {
  const { storage, clock } = deps;
  const workspace = await createDirectory(storage.repos).workspaceNamed(body.workspace);
  const workspaceId = workspace.organizationId;
  const members = await storage.repos.workspaces.members(workspaceId);
  let authorId: string;
  if (body.authorEmail !== undefined) {
    const email = body.authorEmail.toLowerCase();
    const member = members.find((m) => m.email.toLowerCase() === email);
    if (!member) {
      throw badRequest(
        `${body.authorEmail} is not a member of the workspace ${JSON.stringify(workspace.name)} (${workspaceId}), so nothing can be imported as them.`,
      );
    }
    authorId = member.userId;
  } else {
    const owner = members.find((m) => m.role === 'owner');
    if (!owner) throw badRequest(`Workspace ${workspaceId} has no owner to import as; pass --author`);
    authorId = owner.userId;
  }
  // Every folder is checked before anything is imported: an error imports nothing. A default
  // place that is not there is only noted (null).
  const roots: (string | null)[] = [];
  for (const spec of body.sources) {
    if (spec.explicit) roots.push(await checkedFolder(spec.kind, spec.rootDir, rules, { shape: true }));
    else if (!existsSync(defaultPlace(spec.rootDir, rules))) roots.push(null);
    else
      roots.push(await checkedFolder(spec.kind, defaultPlace(spec.rootDir, rules), rules, { shape: false }));
  }
  const reports: HistorySourceReport[] = [];
  for (const [index, spec] of body.sources.entries()) {
    const rootDir = roots[index] ?? defaultPlace(spec.rootDir, rules);
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
    if (roots[index] === null) {
      reports.push({ ...report, missing: true });
      continue;
    }
    const source = await storage.write(async (tx): Promise<HistorySourceRecord> => {
      const found = await tx.history.findSource(workspaceId, spec.kind, rootDir);
      if (found) {
        if (found.authorId !== authorId) await tx.history.setAuthor(found.id, authorId);
        return { ...found, authorId };
      }
      const created: HistorySourceRecord = {
        id: `hsrc_${randomBytes(16).toString('base64url')}`,
        workspaceId,
        kind: spec.kind,
        rootDir,
        authorId,
        paused: false,
        sessionCount: 0,
        messageCount: 0,
        createdAt: clock.now().toISOString(),
      };
      await tx.history.insertSource(created);
      return created;
    });
    reports.push({ ...report, ...(await importSource(deps, source, options)) });
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
export function createHistorySources(deps: HistoryDeps & { dataDir: string }, rules: () => FolderRules) {
  const { storage, dataDir, clock } = deps;
  const { repos } = storage;

  async function view(record: HistorySourceRecord): Promise<HistorySource> {
    const author = await repos.users.findById(record.authorId);
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

  async function find(workspaceId: string, sourceId: string): Promise<HistorySourceRecord> {
    const record = await repos.history.source(sourceId);
    if (!record || record.workspaceId !== workspaceId) throw notFound(`No history source ${sourceId}`);
    return record;
  }

  return {
    async list(workspaceId: string): Promise<HistorySource[]> {
      return Promise.all((await repos.history.sources(workspaceId)).map(view));
    },

    /**
     * The CLIs' folders in their default places that adding would accept and the workspace does
     * not follow yet: what a person who runs these CLIs in a terminal most likely wants to add.
     */
    async found(workspaceId: string, env: NodeJS.ProcessEnv): Promise<FoundHistoryFolder[]> {
      const current = rules();
      const followed = new Set(
        (await repos.history.sources(workspaceId)).map((s) => `${s.kind}:${s.rootDir}`),
      );
      const found: FoundHistoryFolder[] = [];
      for (const kind of HISTORY_KINDS) {
        const rootDir = resolve(defaultRoot(kind, env, current.home));
        if (followed.has(`${kind}:${rootDir}`) || !existsSync(rootDir)) continue;
        const accepted = await checkSourceFolder(kind, rootDir, current).then(
          () => true,
          () => false,
        );
        if (accepted) found.push({ kind, rootDir });
      }
      return found;
    },

    /**
     * The command a person runs on the server's machine to import into the workspace, naming the
     * data directory unless it is the one the command finds by itself. Its path is the
     * administrator's to see (the one who runs commands on it): others are shown `DATA_DIR`.
     */
    importCommand(workspaceId: string, showDataDir: boolean): string {
      const words = ['sessiondesk', 'history', 'import', '--workspace', workspaceId];
      if (resolve(dataDir) !== resolve(defaultDataDir()))
        words.push('--data-dir', showDataDir ? shellWord(dataDir) : 'DATA_DIR');
      return words.join(' ');
    },

    async add(
      workspaceId: string,
      authorId: string,
      kind: HistoryKind,
      rootDir: string,
    ): Promise<HistorySource> {
      const root = await checkedFolder(kind, rootDir, rules(), { shape: true, field: 'body.rootDir' });
      const record = await storage.write(async (tx) => {
        const found = await tx.history.findSource(workspaceId, kind, root);
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
        await tx.history.insertSource(created);
        return created;
      });
      return view(record);
    },

    async setPaused(workspaceId: string, sourceId: string, paused: boolean): Promise<HistorySource> {
      const record = await find(workspaceId, sourceId);
      await storage.write((tx) => tx.history.setPaused(record.id, paused));
      return view({ ...record, paused });
    },

    async remove(workspaceId: string, sourceId: string): Promise<void> {
      const record = await find(workspaceId, sourceId);
      await storage.write((tx) => tx.history.removeSource(record.id));
    },
  };
}
export type HistorySources = ReturnType<typeof createHistorySources>;
