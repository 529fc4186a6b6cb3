import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import type { Logger } from '../../clock.js';
import { keepFolderPrivate } from '../../data-dir-permissions.js';
import { SandboxError } from './session-folder.js';

/**
 * Agents work in folders of their own, outside the data directory: an agent (or a prompt
 * injected through a cloned repository) must not reach the admin token, the journals or
 * the snapshots by walking up from its sandbox.
 */

/** Where sandboxes were kept before they moved out of the data directory. */
export const LEGACY_SANDBOXES = 'sandboxes';

/** Beside the data directory, never inside it: `<data dir>-sandboxes`. */
export function defaultSandboxRoot(dataDir: string): string {
  const dir = resolve(dataDir);
  return join(dirname(dir), `${basename(dir)}-sandboxes`);
}

const inside = (child: string, parent: string) => {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

export class SandboxRootError extends Error {}

/** The path with its symbolic links resolved, as far as it exists; the rest as written. */
function realPathOf(path: string): string {
  const rest: string[] = [];
  let at = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(at), ...rest);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = dirname(at);
      if (parent === at) return resolve(path);
      rest.unshift(basename(at));
      at = parent;
    }
  }
}

/**
 * The sandboxes root to use: refused when it and the data directory contain one another,
 * as written or once symbolic links are followed (a link to the data directory is the data
 * directory).
 */
export function checkSandboxRoot(root: string, dataDir: string): string {
  const sandboxes = resolve(root);
  const data = resolve(dataDir);
  const [realSandboxes, realData] = [realPathOf(sandboxes), realPathOf(data)];
  if (
    inside(sandboxes, data) ||
    inside(data, sandboxes) ||
    inside(realSandboxes, realData) ||
    inside(realData, realSandboxes)
  ) {
    throw new SandboxRootError(
      `The sandboxes folder ${sandboxes} and the data directory ${data} must not contain one another: ` +
        'agents would reach the data. Choose another --sandbox-dir (or SESSIONDESK_SANDBOX_DIR).',
    );
  }
  return sandboxes;
}

/**
 * The data directory's rule applied to the sandboxes root, for everyone (root included: it
 * would run agents in folders another user controls): another user's folder, or their link
 * in its place, is refused; a group- or world-writable one is made 0700, with a warning.
 * Whoever can write there can swap a session's folder or plant the CLIs' configuration
 * (Gemini's `.gemini/settings.json`, Claude Code's hooks) before an agent starts in it.
 */
export function secureSandboxRoot(root: string, dataDir: string, logger: Logger): string {
  const dir = checkSandboxRoot(root, dataDir);
  keepFolderPrivate(dir, {
    label: 'The sandboxes folder',
    logger,
    rootUsesOthers: false,
    refuse: (owner) =>
      new SandboxRootError(
        `The sandboxes folder ${dir} belongs to another user (uid ${owner}), who could change what agents ` +
          'find there; Session Desk only runs agents in a folder of your own. Remove it, or choose another ' +
          '--sandbox-dir (or SESSIONDESK_SANDBOX_DIR).',
      ),
  });
  return dir;
}

/**
 * Checked before each run: the sandboxes root (made private now if it is missing), then the
 * session's own folder, which must be a folder of the user's own right there, not a link to
 * elsewhere, compared after symbolic links are followed. A missing session folder is made
 * by the run inside the private root.
 */
export function secureSessionFolder(root: string, dataDir: string, sessionId: string, logger: Logger): void {
  mkdirSync(checkSandboxRoot(root, dataDir), { recursive: true, mode: 0o700 });
  const sandboxes = secureSandboxRoot(root, dataDir, logger);
  const dir = join(sandboxes, sessionId);
  let stats;
  try {
    stats = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!stats.isDirectory() || realpathSync(dir) !== join(realpathSync(sandboxes), sessionId)) {
    throw new SandboxError(
      `The session's sandbox ${dir} is no longer a folder of its own (a link or a file is in its place), ` +
        'so the agent does not run there. Move it aside to start the session afresh.',
    );
  }
  keepFolderPrivate(dir, {
    label: "The session's sandbox",
    logger,
    rootUsesOthers: false,
    refuse: (owner) =>
      new SandboxError(
        `The session's sandbox ${dir} belongs to another user (uid ${owner}), who could have planted ` +
          'configuration for the agent in it, so the agent does not run there. Move it aside to start the ' +
          'session afresh.',
      ),
  });
}

/**
 * Moves the sandboxes an earlier version kept in `DATA_DIR/sandboxes` to the new root, one
 * session folder at a time (a rename, or a copy then removal across file systems). A folder
 * whose name is already taken in the new root is left where it is, with a warning: nothing
 * is overwritten or lost.
 */
export function moveLegacySandboxes(dataDir: string, root: string, logger: Logger): void {
  const legacy = join(dataDir, LEGACY_SANDBOXES);
  if (!existsSync(legacy)) return;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  let kept = 0;
  for (const name of readdirSync(legacy)) {
    const from = join(legacy, name);
    const to = join(root, name);
    if (existsSync(to)) {
      kept += 1;
      continue;
    }
    try {
      renameSync(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      cpSync(from, to, {
        recursive: true,
        preserveTimestamps: true,
        verbatimSymlinks: true,
        errorOnExist: true,
      });
      rmSync(from, { recursive: true, force: true });
    }
  }
  if (kept > 0) {
    logger.warn(
      `${kept} sandbox(es) in ${legacy} were left there: ${root} already has folders of the same names. ` +
        'Move what you need by hand.',
    );
    return;
  }
  rmdirSync(legacy);
  logger.info(`Moved the sandboxes from ${legacy} to ${root}.`);
}
