import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, shell } from 'electron';
import { DEFAULT_PORT } from '../../src-shared/constants.js';
import { systemClock, type Logger } from '../clock.js';
import { startServer, type RunningServer } from '../server/start.js';

/**
 * The desktop shell: it hosts the same server as `sessiondesk serve` and shows the
 * dashboard in a locked-down window. Everything else lives outside this folder.
 */
const logger: Logger = {
  info: (msg) => console.log(msg),
  warn: (msg) => console.warn(msg),
  error: (msg) => console.error(msg),
};

let server: RunningServer | undefined;

async function openWindow(url: string): Promise<void> {
  const window = new BrowserWindow({
    width: 1280,
    height: 800,
    show: false,
    webPreferences: {
      preload: fileURLToPath(new URL('../preload/preload.cjs', import.meta.url)),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  const origin = new URL(url).origin;
  window.webContents.on('will-navigate', (event, target) => {
    if (new URL(target).origin !== origin) event.preventDefault();
  });
  window.webContents.setWindowOpenHandler(({ url: target }) => {
    if (/^https?:\/\//u.test(target) && new URL(target).origin !== origin) void shell.openExternal(target);
    return { action: 'deny' };
  });
  window.once('ready-to-show', () => window.show());
  await window.loadURL(url);
}

async function start(): Promise<void> {
  server = await startServer({
    dataDir: process.env.SESSIONDESK_DATA_DIR || app.getPath('userData'),
    host: '127.0.0.1',
    port: Number(process.env.SESSIONDESK_PORT) || DEFAULT_PORT,
    fallbackToFreePort: true,
    rendererDir: fileURLToPath(new URL('../renderer', import.meta.url)),
    clock: systemClock,
    logger,
    version: app.getVersion(),
  });
  app.on('web-contents-created', (_event, contents) => {
    contents.session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  });
  await openWindow(server.url);
}

app.on('window-all-closed', () => app.quit());
app.on('before-quit', (event) => {
  if (!server) return;
  event.preventDefault();
  const closing = server;
  server = undefined;
  void closing.close().finally(() => app.quit());
});
app.whenReady().then(start, (err: unknown) => {
  console.error(err);
  app.exit(1);
});
