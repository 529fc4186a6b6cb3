import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, sep } from 'node:path';
import { isInside, realOf } from './folders.js';

/**
 * Finding the programs Session Desk runs (an agent's CLI, bubblewrap) and the folder each is
 * installed in, which its sandbox shows read-only.
 */

/** Where a program is, or why it is not there. */
export type Located = { found: true; path: string } | { found: false; problem: string };

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A program Session Desk runs: its name on PATH, and the variable that may name its path. */
export interface ProgramSpec {
  name: string;
  program: string;
  envVar: string;
  /** The npm package it installs from, when it does. */
  npm?: string | undefined;
}

/** How a program that comes as an npm package is installed. */
export function installCommand(npm: string): string {
  return `npm install -g ${npm}`;
}

/**
 * Finds a program: the path its environment variable names (which must exist), else the
 * first executable of that name on PATH, as a shell would find it.
 */
export function locateExecutable(spec: ProgramSpec, env: NodeJS.ProcessEnv): Located {
  const configured = env[spec.envVar]?.trim();
  if (configured) {
    if (!isAbsolute(configured))
      return { found: false, problem: `${spec.envVar} must be an absolute path, not "${configured}".` };
    return isExecutableFile(configured)
      ? { found: true, path: configured }
      : { found: false, problem: `${spec.envVar} names ${configured}, which is not an executable file.` };
  }
  // A program the administrator named by its path (an ACP agent of theirs).
  if (isAbsolute(spec.program)) {
    return isExecutableFile(spec.program)
      ? { found: true, path: spec.program }
      : { found: false, problem: `${spec.name}'s program ${spec.program} is not an executable file.` };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, spec.program);
    if (isExecutableFile(candidate)) return { found: true, path: candidate };
  }
  const install = spec.npm ? ` (\`${installCommand(spec.npm)}\`)` : '';
  return {
    found: false,
    problem: `${spec.name} (\`${spec.program}\`) was not found on the server's PATH; install it${install} or set ${spec.envVar} to its path.`,
  };
}

/** The first of `folders` that holds `path`, as named or once links are followed, or undefined. */
export function folderHolding(path: string, folders: readonly string[]): string | undefined {
  const real = realOf(path);
  return folders.find((dir) => isInside(path, dir) || isInside(real, dir) || isInside(real, realOf(dir)));
}

/**
 * The folder a program is installed in, read-only in its sandbox: for a program inside a
 * `node_modules` tree, that tree (its package and its dependencies); else its own folder. The
 * home folder, or one holding it, is never the answer (a CLI installed with `npm install` in the
 * home has its tree at `~/node_modules`; a program kept in the home itself is bound alone).
 */
export function installRoot(program: string, home: string | undefined): string {
  const path = realOf(program);
  const parts = path.split(sep);
  const at = parts.indexOf('node_modules');
  const root = at > 0 ? parts.slice(0, at + 1).join(sep) : dirname(path);
  if (root === sep || (home !== undefined && isInside(realOf(home), root))) return path;
  return root;
}
