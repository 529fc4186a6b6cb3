import type { App, Session, WebContents } from 'electron';
import { shell } from 'electron';
import type { Logger } from '../clock.js';
import { windowContentSecurityPolicy, withContentSecurityPolicy } from '../desktop/csp.js';
import {
  isAppUrl,
  isPermissionGranted,
  isRequestAllowed,
  navigationDecision,
  originOf,
  windowOpenDecision,
} from '../desktop/navigation.js';

export interface GuardOptions {
  /** The origins the window may show: the server's, or the dev server's under `npm run dev`. */
  appOrigins: readonly string[];
  /** Set under `npm run dev` only: its page gets the dev exceptions of the CSP. */
  devServerOrigin: string | null;
  logger: Logger;
}

/** Never log a whole URL: a query string may carry an API key. */
function describe(url: string): string {
  return originOf(url) ?? url.split(':')[0] ?? 'an unknown URL';
}

/**
 * The session's own rules, enforced below the page: permission requests denied, every
 * request checked before it leaves, and the CSP set on every page of the app's origins.
 */
export function lockDownSession(session: Session, options: GuardOptions): void {
  const { appOrigins, logger } = options;
  session.setPermissionRequestHandler((_contents, permission, callback, details) => {
    callback(isPermissionGranted(permission, details.requestingUrl, appOrigins));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin) =>
    isPermissionGranted(permission, requestingOrigin, appOrigins),
  );
  session.setDevicePermissionHandler(() => false);
  session.setSpellCheckerEnabled(false);

  session.webRequest.onBeforeRequest((details, callback) => {
    const allowed = isRequestAllowed(details, appOrigins);
    if (!allowed) logger.warn(`blocked a ${details.resourceType} request to ${describe(details.url)}`);
    callback({ cancel: !allowed });
  });

  const policy = windowContentSecurityPolicy(options.devServerOrigin);
  session.webRequest.onHeadersReceived((details, callback) => {
    const isPage = details.resourceType === 'mainFrame' || details.resourceType === 'subFrame';
    if (isPage && isAppUrl(details.url, appOrigins)) {
      callback({ responseHeaders: withContentSecurityPolicy(details.responseHeaders, policy) });
    } else {
      callback({});
    }
  });
}

function guardWebContents(contents: WebContents, options: GuardOptions): void {
  const { appOrigins, logger } = options;
  const stayOnApp = (event: { preventDefault(): void }, url: string) => {
    if (navigationDecision(url, appOrigins) === 'allow') return;
    event.preventDefault();
    logger.warn(`blocked navigation to ${describe(url)}`);
  };
  contents.on('will-navigate', (event) => stayOnApp(event, event.url));
  contents.on('will-redirect', (event) => stayOnApp(event, event.url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const { openExternally } = windowOpenDecision(url, appOrigins);
    if (openExternally !== null) {
      shell.openExternal(openExternally).catch((err: unknown) => {
        logger.warn(`could not open ${describe(openExternally)} in the browser: ${String(err)}`);
      });
    } else if (!isAppUrl(url, appOrigins)) {
      logger.warn(`refused to open ${describe(url)}`);
    }
    return { action: 'deny' };
  });
}

/** Navigation, new windows and webviews, for every web contents the app ever creates. */
export function guardAllWebContents(app: App, options: GuardOptions): void {
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents, options));
}
