import { chmodSync, statSync } from 'node:fs';
import type { Logger } from './clock.js';

export class DataDirPermissionError extends Error {}

/**
 * The data directory holds the database, the admin token and the journals: only its owner
 * may write to it (anyone who can write there can swap the database or plant a lock). One
 * that belongs to another user is refused; one that is group- or world-writable (a folder
 * made under /tmp with a loose umask, say) is made private, with a warning.
 */
export function secureDataDir(dataDir: string, logger: Logger): void {
  if (process.platform === 'win32') return;
  let stats;
  try {
    stats = statSync(dataDir);
  } catch {
    return; // Not there yet: it is created private.
  }
  if (!stats.isDirectory()) return;
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== 0 && stats.uid !== uid) {
    throw new DataDirPermissionError(
      `The data directory ${dataDir} belongs to another user (uid ${stats.uid}); Session Desk only uses a ` +
        'data directory of your own. Choose another with --data-dir.',
    );
  }
  const mode = stats.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    chmodSync(dataDir, 0o700);
    logger.warn(
      `The data directory ${dataDir} could be written by other users (mode ${mode.toString(8)}); ` +
        'it is now readable and writable only by you (700).',
    );
  }
}
