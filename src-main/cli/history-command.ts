import { homedir } from 'node:os';
import {
  HISTORY_IMPORT_PATH,
  HistoryImportResponseSchema,
  type HistoryImportBody,
} from '../../src-shared/history.js';
import type { HistoryKind } from '../../src-shared/sessions.js';
import { systemClock, type Logger } from '../clock.js';
import { AppError } from '../errors.js';
import { defaultRoot } from '../history/importer.js';
import { formatSourceReport, runHistoryImport } from '../history/service.js';
import { ADMIN_TOKEN_HEADER } from '../server/routes/admin.js';
import { createRepositories } from '../store/repositories.js';
import { CliError, describeAdminError, reachDataDir, unreachable } from './admin-target.js';

/** The sources to import: each CLI's named root, else its default location. */
export function historySources(flags: Partial<Record<HistoryKind, string>>): HistoryImportBody['sources'] {
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
export async function historyImport(
  dataDir: string,
  body: HistoryImportBody,
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
