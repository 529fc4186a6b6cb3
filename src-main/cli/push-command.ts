import { hostname } from 'node:os';
import { resolveDataDir } from '../paths.js';
import { systemClock } from '../clock.js';
import { CliError, existingDataDir, openAdminTarget } from './admin-target.js';
import { parse, print, required, stderrLogger } from './command-line.js';
import { openDataTarget } from './data-target.js';
import {
  checkTeamServer,
  pushingSink,
  PushStopped,
  type KnownSessions,
  type PushReport,
  type TeamServer,
} from './push-client.js';
import { UsageError } from './usage.js';

/**
 * `sessiondesk push`: this desktop's sessions (run here or imported from the CLIs' history)
 * sent to the workspace of a team server that the key belongs to; with --watch, again every
 * few seconds until a signal.
 */

/** How often --watch looks for new sessions and messages. */
export const PUSH_WATCH_INTERVAL_MS = 2000;

/** The local workspace to push: by id or name; the only one when none is named. */
async function localWorkspace(dataDir: string, named: string | undefined): Promise<string> {
  const target = await openAdminTarget(dataDir, stderrLogger);
  let workspaces;
  try {
    workspaces = await target.listWorkspaces();
  } finally {
    await target.close();
  }
  const list = () =>
    workspaces.length === 0
      ? 'it has no workspaces'
      : `its workspaces: ${workspaces.map((w) => `${w.organizationId} ("${w.name}")`).join(', ')}`;
  if (named === undefined) {
    if (workspaces.length === 1) return (workspaces[0] as { organizationId: string }).organizationId;
    throw new UsageError(`name the workspace to push with --workspace (${list()})`, 'push');
  }
  const byId = workspaces.find((w) => w.organizationId === named);
  if (byId) return byId.organizationId;
  const byName = workspaces.filter((w) => w.name === named);
  if (byName.length === 1) return (byName[0] as { organizationId: string }).organizationId;
  if (byName.length > 1) {
    throw new CliError(`${byName.length} workspaces are named "${named}": name one by its id (${list()})`);
  }
  throw new CliError(`The data directory ${dataDir} has no workspace "${named}"; ${list()}.`);
}

async function pushOnce(
  dataDir: string,
  organizationId: string,
  server: TeamServer,
  known: KnownSessions,
  stopping: () => boolean,
): Promise<PushReport> {
  const report: PushReport = { sessions: 0, messages: 0, unchanged: 0, refused: [] };
  const target = await openDataTarget(dataDir, stderrLogger);
  try {
    // Sessions imported from the CLIs' history go as a running server would hold them by now.
    await target.followHistory();
    const sink = pushingSink(server, report, known, stopping);
    await target.exportWorkspace(organizationId, 'ndjson', sink);
    sink.finish();
  } finally {
    await target.close();
  }
  return report;
}

function describe(report: PushReport, to: string): string[] {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return [
    `pushed ${plural(report.sessions, 'session')} (${plural(report.messages, 'new message')}) to ${to}; ` +
      `${report.unchanged} already there${report.refused.length > 0 ? `, ${report.refused.length} refused:` : ''}`,
    ...report.refused.map((r) => `  ${r.sessionId}: ${r.reason}`),
  ];
}

export async function pushCommand(args: string[]): Promise<number> {
  const v = parse('push', args);
  // Only the option: push reads the data directory and sends it over HTTP whatever the shell's
  // SESSIONDESK_DATABASE_URL, which is a server's.
  if (v.database !== undefined) {
    throw new UsageError(
      "--database is refused: push sends a data directory's sessions to a team server over HTTP; it does not write into a " +
        'database: leave out --database, and give the server with --to URL (a "serve --database" process).',
      'push',
    );
  }
  required('push', v, 'to', 'key');
  let url: URL;
  try {
    url = new URL(String(v.to));
  } catch {
    throw new UsageError(
      `--to must be the team server's URL (http://HOST:PORT), not ${String(v.to)}`,
      'push',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--to must be an http:// or https:// URL, not ${url.protocol}`, 'push');
  }
  const dataDir = existingDataDir(resolveDataDir(v['data-dir'] as string | undefined));
  const server: TeamServer = { url: url.origin, key: String(v.key), machine: hostname() };
  await checkTeamServer(server);
  const organizationId = await localWorkspace(
    dataDir,
    typeof v.workspace === 'string' ? v.workspace : undefined,
  );

  let stop = false;
  let wake: (() => void) | null = null;
  const onSignal = () => {
    stop = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let refused = false;
  const known: KnownSessions = new Map();
  try {
    for (;;) {
      let report: PushReport;
      try {
        report = await pushOnce(dataDir, organizationId, server, known, () => stop);
      } catch (err) {
        if (err instanceof PushStopped) break;
        throw err;
      }
      refused ||= report.refused.length > 0;
      if (!v.watch || report.sessions > 0 || report.refused.length > 0) {
        for (const line of describe(report, server.url)) print(line);
      }
      if (!v.watch || stop) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, PUSH_WATCH_INTERVAL_MS);
      });
      wake = null;
      if (stop) break;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (v.watch) print(`stopped watching (${systemClock.now().toISOString()})`);
  return refused ? 1 : 0;
}
