import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
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

/** The repository root when running from source (the CLI runs from source). */
export const PROJECT_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
