import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  HISTORY_IMPORT_PATH,
  HistoryImportBodySchema,
  HistoryImportResponseSchema,
  type HistoryImportBody,
} from '../../src-shared/history.js';
import { HISTORY_KINDS, type HistoryKind } from '../../src-shared/sessions.js';
import { defaultSandboxRoot } from '../agents/sandbox/sandbox-root.js';
import { systemClock, type Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { defaultRoot } from '../history/importer.js';
import { formatSourceReport, runHistoryImport } from '../history/service.js';
import {
  checkSourceFolder,
  expandHome,
  folderRules,
  SourceFolderRefused,
  type FolderRules,
} from '../history/source-folder.js';
import { resolveDataDir } from '../paths.js';
import { ADMIN_TOKEN_HEADER } from '../server/routes/admin.js';
import { storageOf } from '../store/sqljs-storage.js';
import { CliError, describeAdminError, existingDataDir, reachDataDir, unreachable } from './admin-target.js';
import { parse, print, required, stderrLogger, validate } from './command-line.js';
import { refuseTeamDatabase } from './team-database.js';
import { UsageError } from './usage.js';

/**
 * `sessiondesk history import`: the agent CLIs' folders it names (else their default places),
 * imported through the server that holds the data directory, else on the directory itself.
 */

/** The sources to import: each CLI's named root, else its default location. */
function historySources(flags: Partial<Record<HistoryKind, string>>): HistoryImportBody['sources'] {
  return HISTORY_KINDS.map((kind) => {
    const named = flags[kind];
    return named !== undefined
      ? { kind, rootDir: named, explicit: true }
      : { kind, rootDir: defaultRoot(kind, process.env, homedir()), explicit: false };
  });
}

/**
 * Runs the import on the data directory: through the running server that holds it (so it sees
 * the sessions at once), else by opening it. Returns the report's lines.
 */
async function historyImport(
  dataDir: string,
  body: HistoryImportBody,
  rules: FolderRules,
  logger: Logger,
): Promise<string[]> {
  const access = await reachDataDir(dataDir, logger);
  if (access.kind === 'server') {
    let response: Response;
    try {
      response = await fetch(new URL(HISTORY_IMPORT_PATH, access.url), {
        method: 'POST',
        headers: { [ADMIN_TOKEN_HEADER]: access.adminToken, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    } catch (err) {
      throw unreachable(access.url, err);
    }
    const text = await response.text();
    if (!response.ok) throw new CliError(describeAdminError(response.status, text));
    return HistoryImportResponseSchema.parse(JSON.parse(text)).sources.map(formatSourceReport);
  }
  const { store } = access;
  try {
    const reports = await runHistoryImport(
      { store, storage: storageOf(store), clock: systemClock },
      body,
      rules,
      // No server in this process: nothing waits for a turn of its event loop.
      { turnMs: Infinity },
    );
    return reports.map(formatSourceReport);
  } catch (err) {
    if (err instanceof AppError) throw new CliError(err.message);
    throw err;
  } finally {
    // An import writes much: the server's next start should not replay it all.
    await store.close({ snapshot: 'when-large' });
  }
}

const DIR_FLAGS: Record<HistoryKind, string> = {
  'claude-code': 'claude-dir',
  codex: 'codex-dir',
  gemini: 'gemini-dir',
  'qwen-code': 'qwen-dir',
  opencode: 'opencode-dir',
};

export async function historyImportCommand(args: string[]): Promise<void> {
  const v = parse('history import', args);
  refuseTeamDatabase(
    'history import',
    v.database,
    () =>
      "history import brings this machine's agent CLI sessions into a data directory; it cannot write " +
      "into a team server's database, and nothing was imported. Import them on the desktop, then send " +
      'them with "sessiondesk push --to URL --key KEY" (a key from "sessiondesk key create --push-only").',
  );
  required('history import', v, 'workspace');
  const flag = (name: string) => (typeof v[name] === 'string' ? String(v[name]) : undefined);
  const dataDir = resolveDataDir(flag('data-dir'));
  const rules = folderRules(process.env, dataDir, defaultSandboxRoot(dataDir));
  // Each named folder is checked here, before the data directory is touched: a wrong one is a
  // mistake in the command line.
  const dirs: Partial<Record<HistoryKind, string>> = {};
  for (const kind of HISTORY_KINDS) {
    const named = flag(DIR_FLAGS[kind]);
    if (named === undefined) continue;
    try {
      dirs[kind] = await checkSourceFolder(kind, resolve(expandHome(named, rules.home)), rules);
    } catch (err) {
      if (err instanceof SourceFolderRefused)
        throw new UsageError(`--${DIR_FLAGS[kind]}: ${err.message}`, 'history import');
      throw err;
    }
  }
  const author = flag('author');
  const body = validate('history import', HistoryImportBodySchema, {
    workspace: v.workspace,
    sources: historySources(dirs),
    ...(author === undefined ? {} : { authorEmail: author }),
  });
  const lines = await historyImport(existingDataDir(dataDir), body, rules, stderrLogger);
  for (const line of lines) print(line);
}
