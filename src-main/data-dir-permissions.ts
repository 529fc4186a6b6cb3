import { chmodSync, lstatSync, statSync } from 'node:fs';
import type { Logger } from './clock.js';

export class DataDirPermissionError extends Error {}

/**
 * The rule for a folder only its owner may write to (the data directory, the sandboxes
 * folder): anyone else who can write there can swap what Session Desk reads or runs. One that
 * belongs to another user is refused (`refuse` says what to do), and so is a symbolic link
 * another user made in its place (they can point it elsewhere at any time); one that is
 * group- or world-writable (a folder made under /tmp with a loose umask, say) is made
 * private, with a warning. A folder that does not exist yet passes: it is created private.
 */
export function keepFolderPrivate(
  dir: string,
  options: {
    /** How the warning names it: "The data directory". */
    label: string;
    logger: Logger;
    refuse: (ownerUid: number) => Error;
    /** Whether root may use a folder of another user (an administrator acting on it). */
    rootUsesOthers: boolean;
  },
): void {
  if (process.platform === 'win32') return;
  let stats;
  let link;
  try {
    link = lstatSync(dir);
    stats = statSync(dir);
  } catch {
    return;
  }
  if (!stats.isDirectory()) return;
  const uid = process.getuid?.();
  const mayUse = (owner: number) =>
    uid === undefined || owner === uid || (uid === 0 && options.rootUsesOthers);
  // A link root made cannot be pointed elsewhere by anyone else.
  if (link.isSymbolicLink() && link.uid !== 0 && !mayUse(link.uid)) throw options.refuse(link.uid);
  if (!mayUse(stats.uid)) throw options.refuse(stats.uid);
  const mode = stats.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    chmodSync(dir, 0o700);
    options.logger.warn(
      `${options.label} ${dir} could be written by other users (mode ${mode.toString(8)}); ` +
        'it is now readable and writable only by you (700).',
    );
  }
}

/**
 * The data directory holds the database, the admin token, the journals and the agent
 * commands: it must be the user's own.
 */
export function secureDataDir(dataDir: string, logger: Logger): void {
  keepFolderPrivate(dataDir, {
    label: 'The data directory',
    logger,
    rootUsesOthers: true,
    refuse: (owner) =>
      new DataDirPermissionError(
        `The data directory ${dataDir} belongs to another user (uid ${owner}); Session Desk only uses a ` +
          'data directory of your own. Choose another with --data-dir.',
      ),
  });
}
