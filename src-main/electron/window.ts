import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrowserWindow, screen } from 'electron';
import type { Logger } from '../clock.js';
import { apiUrlArgument } from '../desktop/api-url-argument.js';
import { windowTitle } from '../desktop/server-identity.js';
import {
  MIN_WINDOW_SIZE,
  WINDOW_STATE_FILE,
  placeWindow,
  readWindowState,
  writeWindowState,
} from '../desktop/window-state.js';

export interface MainWindowOptions {
  /** What the window loads: the server's URL, or the dev server's under `npm run dev`. */
  url: string;
  /** The API's base URL, shown in the title and handed to the preload. */
  apiUrl: string;
  /** Where window-state.json lives (Electron's userData). */
  userDataDir: string;
  devTools: boolean;
  logger: Logger;
}

/** A renderer that crashes is reloaded, a few times at most. */
const MAX_RELOADS_AFTER_CRASH = 3;

function workAreas() {
  const primary = screen.getPrimaryDisplay();
  const others = screen.getAllDisplays().filter((display) => display.id !== primary.id);
  return [primary, ...others].map((display) => display.workArea);
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const { logger } = options;
  const stateFile = join(options.userDataDir, WINDOW_STATE_FILE);
  const placement = placeWindow(readWindowState(stateFile), workAreas());
  const window = new BrowserWindow({
    ...placement.bounds,
    minWidth: MIN_WINDOW_SIZE.width,
    minHeight: MIN_WINDOW_SIZE.height,
    show: false,
    title: windowTitle('Session Desk', options.apiUrl),
    webPreferences: {
      preload: fileURLToPath(new URL('../preload/preload.cjs', import.meta.url)),
      additionalArguments: [apiUrlArgument(options.apiUrl)],
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: options.devTools,
    },
  });
  if (placement.maximized) window.maximize();

  // The page's title is "Session Desk"; the window's also says where the API is.
  window.on('page-title-updated', (event, title) => {
    event.preventDefault();
    window.setTitle(windowTitle(title, options.apiUrl));
  });
  window.on('close', () => {
    try {
      writeWindowState(stateFile, { bounds: window.getNormalBounds(), maximized: window.isMaximized() });
    } catch (err) {
      logger.warn(`could not save the window's size and position: ${String(err)}`);
    }
  });
  window.once('ready-to-show', () => window.show());

  let reloads = 0;
  window.webContents.on('render-process-gone', (_event, details) => {
    logger.error(`the window's renderer stopped (${details.reason})`);
    if (details.reason !== 'clean-exit' && reloads < MAX_RELOADS_AFTER_CRASH) {
      reloads += 1;
      window.webContents.reload();
    }
  });

  window.loadURL(options.url).catch((err: unknown) => {
    // The URL holds the launch token: only its origin is logged.
    logger.error(`the window could not load ${new URL(options.url).origin}: ${String(err)}`);
  });
  return window;
}
