import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  HISTORY_IMPORT_PATH,
  HistoryImportBodySchema,
  HistoryImportResponseSchema,
  type HistoryImportBody,
} from '../../src-shared/history.js';
import type { HistoryKind } from '../../src-shared/sessions.js';
import { systemClock, type Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { defaultRoot } from '../history/importer.js';
import { formatSourceReport, runHistoryImport } from '../history/service.js';
import { resolveDataDir } from '../paths.js';
import { ADMIN_TOKEN_HEADER } from '../server/routes/admin.js';
import { createRepositories } from '../store/repositories.js';
import { CliError, describeAdminError, reachDataDir, unreachable } from './admin-target.js';
import { parse, print, required, stderrLogger, validate } from './command-line.js';
import { USAGE } from './usage.js';

/**
 * `sessiondesk history import`: the agent CLIs' folders it names (else their default places),
 * imported through the server that holds the data directory, else on the directory itself.
 */

/** The sources to import: each CLI's named root, else its default location. */
function historySources(flags: Partial<Record<HistoryKind, string>>): HistoryImportBody['sources'] {
  const kinds: HistoryKind[] = ['claude-code', 'codex', 'gemini'];
  return kinds.map((kind) => {
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
async function historyImport(dataDir: string, body: HistoryImportBody, logger: Logger): Promise<string[]> {
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
      { store, repos: createRepositories(store.db), clock: systemClock },
      body,
    );
    return reports.map(formatSourceReport);
  } catch (err) {
    if (err instanceof AppError) throw new CliError(err.message);
    throw err;
  } finally {
    await store.close({ snapshot: false });
  }
}

export async function historyImportCommand(args: string[]): Promise<void> {
  const v = parse('history import', args, {
    workspace: { type: 'string' },
    'claude-dir': { type: 'string' },
    'codex-dir': { type: 'string' },
    'gemini-dir': { type: 'string' },
    author: { type: 'string' },
  });
  if (v.help) return print(USAGE['history import']);
  required('history import', v, 'workspace');
  const flag = (name: string) => (typeof v[name] === 'string' ? String(v[name]) : undefined);
  const dirs: Partial<Record<'claude-code' | 'codex' | 'gemini', string>> = {};
  for (const [kind, name] of [
    ['claude-code', 'claude-dir'],
    ['codex', 'codex-dir'],
    ['gemini', 'gemini-dir'],
  ] as const) {
    const dir = flag(name);
    if (dir !== undefined) dirs[kind] = resolve(dir);
  }
  const author = flag('author');
  const body = validate('history import', HistoryImportBodySchema, {
    organizationId: v.workspace,
    sources: historySources(dirs),
    ...(author === undefined ? {} : { authorEmail: author }),
  });
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  for (const line of await historyImport(dataDir, body, stderrLogger)) print(line);
}
