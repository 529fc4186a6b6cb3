import { resolve } from 'node:path';
import { DEFAULT_PORT } from '../../src-shared/constants.js';
import { resolveDataDir } from '../paths.js';

/** A setting the desktop app cannot start with; its message names the setting and the fix. */
export class DesktopConfigError extends Error {}

export interface DesktopConfig {
  /** Where the database, server.json and admin.token live. */
  dataDir: string;
  /** The port asked for; when it is taken the server takes a free one (see startServer). */
  port: number;
  /** `npm run dev`: the Vite dev server that serves the dashboard with hot reload. */
  devServerUrl: string | null;
}

export interface DesktopConfigInput {
  env: NodeJS.ProcessEnv;
  /** Electron's userData folder (after any --user-data-dir). */
  userDataDir: string;
  /** app.isPackaged: an installed app never follows a dev server URL from its environment. */
  isPackaged: boolean;
}

/**
 * The port from SESSIONDESK_PORT, else 4319. 0 means any free port. Anything that is not a
 * whole number from 0 to 65535 is refused rather than silently replaced.
 */
export function resolvePort(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_PORT;
  const text = value.trim();
  const port = Number(text);
  if (!/^\d+$/u.test(text) || port > 65535) {
    throw new DesktopConfigError(`SESSIONDESK_PORT must be a port number from 0 to 65535, not "${value}".`);
  }
  return port;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * electron-vite sets ELECTRON_RENDERER_URL under `npm run dev`. Only a plain-HTTP loopback
 * URL is followed, and never by a packaged app.
 */
export function resolveDevServerUrl(value: string | undefined, isPackaged: boolean): string | null {
  if (isPackaged || value === undefined || value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DesktopConfigError(`ELECTRON_RENDERER_URL is not a URL: "${value}".`);
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.username || url.password) {
    throw new DesktopConfigError(
      `ELECTRON_RENDERER_URL must be an http:// URL on this machine (127.0.0.1 or localhost), not "${value}".`,
    );
  }
  return url.origin;
}

/** The data folder: SESSIONDESK_DATA_DIR when set (as for the CLI), else Electron's userData. */
export function resolveDesktopDataDir(env: NodeJS.ProcessEnv, userDataDir: string): string {
  return env.SESSIONDESK_DATA_DIR ? resolveDataDir(undefined, env) : resolve(userDataDir);
}

export function resolveDesktopConfig(input: DesktopConfigInput): DesktopConfig {
  return {
    dataDir: resolveDesktopDataDir(input.env, input.userDataDir),
    port: resolvePort(input.env.SESSIONDESK_PORT),
    devServerUrl: resolveDevServerUrl(input.env.ELECTRON_RENDERER_URL, input.isPackaged),
  };
}

/**
 * Chromium's `--user-data-dir=DIR` switch, which the app applies to Electron's userData
 * (profile, window state and, by default, the database): one flag isolates a whole launch.
 */
export function userDataDirFromArgv(argv: readonly string[]): string | null {
  const prefix = '--user-data-dir=';
  for (const arg of argv) {
    if (arg.startsWith(prefix) && arg.length > prefix.length) return resolve(arg.slice(prefix.length));
  }
  return null;
}
