import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import type { Logger } from '../clock.js';

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

/** The sandboxes root to use: refused when it and the data directory contain one another. */
export function checkSandboxRoot(root: string, dataDir: string): string {
  const sandboxes = resolve(root);
  const data = resolve(dataDir);
  if (inside(sandboxes, data) || inside(data, sandboxes)) {
    throw new SandboxRootError(
      `The sandboxes folder ${sandboxes} and the data directory ${data} must not contain one another: ` +
        'agents would reach the data. Choose another --sandbox-dir (or SESSIONDESK_SANDBOX_DIR).',
    );
  }
  return sandboxes;
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
