import { readServerInfo } from '../server-file.js';
import { DataDirLockedError } from '../store/lock.js';

/**
 * What the error dialog says when the app cannot start. A data folder held by another
 * process names it, and its URL when that process announced one in server.json.
 */
export function describeStartupError(err: unknown, dataDir: string): { title: string; message: string } {
  const title = 'Session Desk could not start';
  if (err instanceof DataDirLockedError) {
    const running = readServerInfo(dataDir)?.info;
    const where = running && running.pid === err.pid ? `, serving ${running.url}` : '';
    return {
      title,
      message:
        `The data folder ${dataDir} is in use by another Session Desk process (pid ${err.pid}${where}), ` +
        'for example `sessiondesk serve`. Stop it and start the app again, or set SESSIONDESK_DATA_DIR to another folder.',
    };
  }
  return { title, message: err instanceof Error ? err.message : String(err) };
}
