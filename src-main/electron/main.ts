import { fileURLToPath } from 'node:url';
import { app, clipboard, dialog, Menu, session, shell, type BrowserWindow } from 'electron';
import { SESSION_COOKIE } from '../../src-shared/constants.js';
import { systemClock, type Logger } from '../clock.js';
import { resolveDesktopConfig, userDataDirFromArgv, type DesktopConfig } from '../desktop/config.js';
import { probeDevServer, verifiedAppOrigin } from '../desktop/server-identity.js';
import { endSignIn } from '../desktop/sign-out.js';
import { describeStartupError } from '../desktop/startup-error.js';
import { agentConfigFromEnv } from '../agents/run/config.js';
import { withLaunchToken } from '../server/auth/launch-token.js';
import { startServer, type RunningServer } from '../server/start.js';
import { buildAppMenu } from './menu.js';
import { guardAllWebContents, lockDownSession } from './session-guards.js';
import { createMainWindow } from './window.js';

/**
 * The desktop shell: it hosts the same server as `sessiondesk serve` and shows the
 * dashboard in a locked-down window. The rules it applies live in ../desktop (plain
 * modules, tested under Node); this folder only wires them to Electron.
 */
const logger: Logger = {
  info: (msg) => process.stderr.write(`sessiondesk: ${msg}\n`),
  warn: (msg) => process.stderr.write(`sessiondesk: warning: ${msg}\n`),
  error: (msg) => process.stderr.write(`sessiondesk: error: ${msg}\n`),
};

interface Running {
  server: RunningServer;
  /** Opens the window, or returns the one that is open. */
  openWindow(): BrowserWindow;
}

async function start(config: DesktopConfig): Promise<Running> {
  const server = await startServer({
    dataDir: config.dataDir,
    host: '127.0.0.1',
    port: config.port,
    fallbackToFreePort: true,
    rendererDir: fileURLToPath(new URL('../renderer', import.meta.url)),
    clock: systemClock,
    logger,
    version: app.getVersion(),
    // SESSIONDESK_AGENT_COMMAND and SESSIONDESK_DEMO_PACE_MS, as for `sessiondesk serve`.
    agents: agentConfigFromEnv(process.env),
  });
  try {
    // The window loads only what this process itself listens on; if 4319 belonged to
    // another program, startServer took a free port and this is that port.
    let windowUrl = `${verifiedAppOrigin(server.url, server.app.server.address())}/`;
    let devServerOrigin: string | null = null;
    if (config.devServerUrl !== null) {
      const probe = await probeDevServer(config.devServerUrl, server.app.server);
      if (probe.ok) {
        windowUrl = `${config.devServerUrl}/`;
        devServerOrigin = config.devServerUrl;
      } else {
        logger.warn(
          `dev: ${probe.reason}. The window shows the built dashboard from ${server.url} instead ` +
            '(no hot reload for the dashboard); see "Development" in docs/guides/desktop-app.md for the Vite proxy.',
        );
      }
    }
    const guards = { appOrigins: [new URL(windowUrl).origin], devServerOrigin, logger };
    // The window gets the launch token directly, as `serve` prints it: it may set up and open the demo.
    windowUrl = withLaunchToken(windowUrl, server.launchToken);
    lockDownSession(session.defaultSession, guards);
    guardAllWebContents(app, guards);

    process.stdout.write(`Session Desk is running at ${server.url}\nData directory: ${config.dataDir}\n`);
    const devTools = !app.isPackaged;
    let window: BrowserWindow | null = null;
    const openWindow = () => {
      if (window !== null && !window.isDestroyed()) return window;
      const opened = createMainWindow({
        url: windowUrl,
        apiUrl: server.url,
        userDataDir: app.getPath('userData'),
        devTools,
        logger,
      });
      opened.on('closed', () => {
        if (window === opened) window = null;
      });
      window = opened;
      return opened;
    };

    const signOut = async () => {
      const target = openWindow();
      const cookieUrl = new URL(windowUrl).origin;
      const cookies = await target.webContents.session.cookies.get({ url: cookieUrl, name: SESSION_COOKIE });
      for (const cookie of cookies) await endSignIn(server.url, cookie.value);
      await target.webContents.session.cookies.remove(cookieUrl, SESSION_COOKIE);
      await target.loadURL(windowUrl);
    };
    Menu.setApplicationMenu(
      buildAppMenu({
        apiUrl: server.url,
        copyApiUrl: () => clipboard.writeText(server.url),
        openDataFolder: () => {
          void shell.openPath(config.dataDir).then((problem) => {
            if (problem) logger.warn(`could not open ${config.dataDir}: ${problem}`);
          });
        },
        signOut: () => {
          signOut().catch((err: unknown) => {
            logger.error(`sign-out failed: ${err instanceof Error ? err.message : String(err)}`);
            dialog.showErrorBox('Sign out failed', err instanceof Error ? err.message : String(err));
          });
        },
        devTools,
      }),
    );
    return { server, openWindow };
  } catch (err) {
    await server.close().catch(() => undefined);
    throw err;
  }
}

function main(): void {
  // A desktop app may have no terminal, or one that was closed: a lost log line must not crash it.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  // Before anything reads a path: the single-instance lock and the profile live in userData.
  const userDataDir = userDataDirFromArgv(process.argv);
  if (userDataDir !== null) app.setPath('userData', userDataDir);
  app.enableSandbox();

  if (!app.requestSingleInstanceLock()) {
    // The first instance gets 'second-instance' and comes to the front.
    app.quit();
    return;
  }

  const starting: Promise<Running | null> = app.whenReady().then(async () => {
    let config: DesktopConfig | null = null;
    try {
      config = resolveDesktopConfig({
        env: process.env,
        userDataDir: app.getPath('userData'),
        isPackaged: app.isPackaged,
      });
      const running = await start(config);
      running.openWindow();
      return running;
    } catch (err) {
      const { title, message } = describeStartupError(err, config?.dataDir ?? app.getPath('userData'));
      logger.error(message);
      dialog.showErrorBox(title, message);
      app.exit(1);
      return null;
    }
  });

  app.on('second-instance', () => {
    void starting.then((running) => {
      const window = running?.openWindow();
      if (!window) return;
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
    });
  });
  app.on('activate', () => {
    void starting.then((running) => running?.openWindow());
  });
  // On macOS the app (and the API scripts use) stays up without a window, as apps do there.
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  // Quit waits for the store to flush and close; every acknowledged write is already on
  // disk (the journal is fsync'd before each reply), so a crash loses none either.
  let stopped = false;
  let stopping = false;
  app.on('before-quit', (event) => {
    if (stopped) return;
    event.preventDefault();
    if (stopping) return;
    stopping = true;
    void starting
      .then((running) => running?.server.close())
      .catch((err: unknown) => logger.error(`could not close the store cleanly: ${String(err)}`))
      .finally(() => {
        stopped = true;
        app.quit();
      });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
}

main();
