import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A running server announces itself in its data directory: `server.json` (where it
 * listens) for scripts, and `admin.token` (readable only by this user) for the CLI.
 */
export const SERVER_FILE = 'server.json';
export const ADMIN_TOKEN_FILE = 'admin.token';

export interface ServerInfo {
  url: string;
  host: string;
  port: number;
  pid: number;
  startedAt: string;
}

function writePrivate(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

export function newAdminToken(): string {
  return randomBytes(32).toString('base64url');
}

export function announceServer(dataDir: string, info: ServerInfo, adminToken: string): void {
  writePrivate(join(dataDir, ADMIN_TOKEN_FILE), adminToken);
  writePrivate(join(dataDir, SERVER_FILE), `${JSON.stringify(info, null, 2)}\n`);
}

export function withdrawServer(dataDir: string): void {
  rmSync(join(dataDir, SERVER_FILE), { force: true });
  rmSync(join(dataDir, ADMIN_TOKEN_FILE), { force: true });
}

export function readServerInfo(dataDir: string): { info: ServerInfo; adminToken: string } | null {
  try {
    const info = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as ServerInfo;
    const adminToken = readFileSync(join(dataDir, ADMIN_TOKEN_FILE), 'utf8').trim();
    return { info, adminToken };
  } catch {
    return null;
  }
}
