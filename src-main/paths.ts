import { homedir } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const APP_NAME = 'Session Desk';

/**
 * Where data lives when neither `--data-dir` nor SESSIONDESK_DATA_DIR says: the folder the
 * desktop app uses (Electron's userData for "Session Desk"), so the CLI and the app share it.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', APP_NAME);
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), APP_NAME);
}

export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined && flag !== '') return resolve(flag);
  if (env.SESSIONDESK_DATA_DIR) return resolve(env.SESSIONDESK_DATA_DIR);
  return defaultDataDir(env);
}

/**
 * A path as one word of a shell command a person copies: as it is when nothing in it is special
 * to a shell, else quoted (single quotes for POSIX shells, where nothing inside is expanded).
 */
export function shellWord(path: string, platform = process.platform): string {
  if (/^[\w@%+=:,./-]+$/u.test(path)) return path;
  if (platform === 'win32') return `"${path}"`;
  return `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * The checkout's root: the nearest folder above this module holding the package's
 * package.json. The CLI runs from source (src-main/) or from its build (out/cli/).
 */
export const PROJECT_ROOT = findProjectRoot(fileURLToPath(new URL('.', import.meta.url)));

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${from}`);
  }
}
