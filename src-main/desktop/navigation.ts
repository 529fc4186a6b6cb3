/**
 * What the desktop window may load, open and ask for. The window shows only the app's own
 * origins (the server's, or the Vite dev server's under `npm run dev`); links elsewhere go
 * to the system browser, and only when they are http(s).
 */

/** The origin of an absolute http(s) or ws(s) URL, or null (unparsable, opaque, other scheme). */
export function originOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) return null;
  return parsed.origin;
}

export function isAppUrl(url: string, appOrigins: readonly string[]): boolean {
  const origin = originOf(url);
  return origin !== null && origin.startsWith('http') && appOrigins.includes(origin);
}

/** will-navigate / will-redirect: the window stays on the app's origins. */
export function navigationDecision(url: string, appOrigins: readonly string[]): 'allow' | 'block' {
  return isAppUrl(url, appOrigins) ? 'allow' : 'block';
}

/**
 * The URL to hand to the system browser, or null: only absolute http(s) URLs without
 * credentials (no file:, javascript:, custom protocols, or `https://user:pass@…` tricks).
 */
export function externalLink(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.username !== '' || parsed.password !== '') return null;
  return parsed.href;
}

/**
 * window.open and target=_blank: the app never opens a second window. A link to another
 * site (a pull request, a repository) opens in the system browser.
 */
export function windowOpenDecision(
  url: string,
  appOrigins: readonly string[],
): { openExternally: string | null } {
  if (isAppUrl(url, appOrigins)) return { openExternally: null };
  return { openExternally: externalLink(url) };
}

export type ResourceType =
  | 'mainFrame'
  | 'subFrame'
  | 'stylesheet'
  | 'script'
  | 'image'
  | 'font'
  | 'object'
  | 'xhr'
  | 'ping'
  | 'cspReport'
  | 'media'
  | 'webSocket'
  | 'other';

/**
 * Every request of the window's session, checked before it leaves: the app's origins (and,
 * for the dev server, its hot-reload WebSocket), https images (avatars, as the CSP allows),
 * and in-page data:/blob: URLs. Nothing else, so even a page that slipped past the
 * navigation rules could not reach another program on this machine.
 */
export function isRequestAllowed(
  request: { url: string; resourceType: ResourceType },
  appOrigins: readonly string[],
): boolean {
  let parsed: URL;
  try {
    parsed = new URL(request.url);
  } catch {
    return false;
  }
  switch (parsed.protocol) {
    case 'data:':
    case 'blob:':
    case 'devtools:':
      return true;
    case 'http:':
    case 'https:':
      if (appOrigins.includes(parsed.origin)) return true;
      return parsed.protocol === 'https:' && request.resourceType === 'image';
    case 'ws:':
      return request.resourceType === 'webSocket' && appOrigins.includes(`http://${parsed.host}`);
    default:
      return false;
  }
}

/**
 * Permission requests are denied, with two exceptions, each for the dashboard's own pages only:
 * its "Copy" buttons (navigator.clipboard.writeText) need `clipboard-sanitized-write`, which
 * Chromium grants only during a user gesture; and Settings › Notifications asks for
 * `notifications`, which Electron shows as the system's own notifications when an agent needs
 * someone. Reading the clipboard stays denied.
 */
const APP_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write', 'notifications']);

export function isPermissionGranted(
  permission: string,
  requestingUrl: string | undefined,
  appOrigins: readonly string[],
): boolean {
  if (!APP_PERMISSIONS.has(permission) || requestingUrl === undefined) return false;
  return isAppUrl(requestingUrl, appOrigins);
}
