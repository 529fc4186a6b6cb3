import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { _electron, test as base, expect, type ElectronApplication, type Page } from '@playwright/test';
import { readServerInfo } from '../../src-main/server-file.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const require = createRequire(import.meta.url);

/** The executable inside Electron's dist folder, as node_modules/electron names it per platform. */
function defaultExecutable(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  if (platform === 'win32') return 'electron.exe';
  return 'electron';
}

/**
 * Where Electron's binary is, found the way node_modules/electron finds it (its path.txt, or
 * ELECTRON_OVERRIDE_DIST_PATH) but without requiring that package, which would try to
 * download a missing binary. Null when there is none.
 */
export function electronBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  const packageDir = dirname(require.resolve('electron/package.json'));
  const pathFile = join(packageDir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : null;
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  let candidate: string | null = null;
  if (override) candidate = join(override, relative || defaultExecutable(process.platform));
  else if (relative) candidate = join(packageDir, 'dist', relative);
  return candidate !== null && existsSync(candidate) ? candidate : null;
}

/** Why the Electron tests cannot run here, or null when they can. */
export function electronUnavailable(env: NodeJS.ProcessEnv = process.env): string | null {
  if (electronBinary(env) === null) {
    return (
      'no Electron binary: node_modules/electron has no dist/ (installed with ELECTRON_SKIP_BINARY_DOWNLOAD, ' +
      'or the download was blocked). Run `node node_modules/electron/install.js` or set ELECTRON_OVERRIDE_DIST_PATH.'
    );
  }
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return 'no display for Electron (DISPLAY is not set): run under `xvfb-run -a npx playwright test test/e2e/electron.spec.ts`.';
  }
  return null;
}

/** The environment of a launch: ours, minus anything that would change what is tested. */
function launchEnv(overrides: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = value;
  }
  for (const name of [
    'ELECTRON_RUN_AS_NODE',
    'ELECTRON_RENDERER_URL',
    'SESSIONDESK_DATA_DIR',
    'NODE_OPTIONS',
  ]) {
    delete env[name];
  }
  // Any free port unless a test asks for one: a running Session Desk must not matter.
  return { ...env, SESSIONDESK_PORT: '0', ...overrides };
}

function appArgs(userDataDir: string): string[] {
  return [ROOT, `--user-data-dir=${userDataDir}`];
}

export interface Desktop {
  app: ElectronApplication;
  window: Page;
  /** The API's URL, read where scripts find it: server.json in the data folder. */
  url: string;
  /** Quits the app (the way the menu's Quit does) and waits for it to exit. */
  close(): Promise<void>;
}

interface Fixtures {
  /** A fresh userData folder (the app's data folder too), deleted after the test. */
  userDataDir: string;
  /** Launches the built app (out/) on `userDataDir`; every launch is closed after the test. */
  launchDesktop(options?: { env?: Record<string, string> }): Promise<Desktop>;
}

export const test = base.extend<Fixtures>({
  userDataDir: async ({}, use) => {
    const dir = tempDir('sessiondesk-electron-');
    await use(dir);
    rmSync(dir, { recursive: true, force: true });
  },
  launchDesktop: async ({ userDataDir }, use, testInfo) => {
    const executablePath = electronBinary();
    if (executablePath === null) throw new Error('no Electron binary (the spec should have been skipped)');
    if (!existsSync(join(ROOT, 'out', 'main', 'main.js'))) {
      throw new Error('the desktop app is not built: run `npm run build` first');
    }
    const launched: ElectronApplication[] = [];
    let output = '';
    await use(async (options = {}) => {
      const app = await _electron.launch({
        executablePath,
        args: appArgs(userDataDir),
        cwd: ROOT,
        env: launchEnv(options.env ?? {}),
        timeout: 30_000,
      });
      launched.push(app);
      app.process().stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      app.process().stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const window = await app.firstWindow();
      const pid = app.process().pid;
      await expect
        .poll(() => readServerInfo(userDataDir)?.info.pid, {
          message: 'server.json of this launch',
          timeout: 30_000,
        })
        .toBe(pid);
      const url = readServerInfo(userDataDir)!.info.url;
      return { app, window, url, close: () => app.close() };
    });
    for (const app of launched) await app.close().catch(() => undefined);
    if (output !== '' && testInfo.status !== testInfo.expectedStatus) {
      await testInfo.attach('electron output', { body: output, contentType: 'text/plain' });
    }
  },
});

/** Starts the app a second time on the same userData and returns its exit code. */
export function runSecondInstance(userDataDir: string): Promise<number | null> {
  const executablePath = electronBinary();
  if (executablePath === null) throw new Error('no Electron binary');
  // Playwright passes --no-sandbox on Linux (Chromium refuses to start as root without it).
  const args = [...(process.platform === 'linux' ? ['--no-sandbox'] : []), ...appArgs(userDataDir)];
  const child = spawn(executablePath, args, { cwd: ROOT, env: launchEnv({}), stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

export { expect };
