import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The server the window would load is not provably this process's own. */
export class ServerIdentityError extends Error {}

/**
 * The one origin the window may load in production: the URL startServer returned, checked
 * against the socket this process itself listens on. Always the 127.0.0.1 literal, never
 * "localhost" (which may resolve to ::1, where another program can listen on the same port).
 */
export function verifiedAppOrigin(url: string, address: AddressInfo | string | null): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' || parsed.hostname !== '127.0.0.1' || parsed.pathname !== '/') {
    throw new ServerIdentityError(`The server URL ${url} is not http://127.0.0.1:PORT.`);
  }
  if (address === null || typeof address === 'string') {
    throw new ServerIdentityError('The server is not listening on a TCP port.');
  }
  const port = parsed.port === '' ? 80 : Number(parsed.port);
  if (address.address !== '127.0.0.1' || address.port !== port) {
    throw new ServerIdentityError(
      `The server URL ${url} does not match the socket this app listens on (${address.address}:${address.port}).`,
    );
  }
  return parsed.origin;
}

/** The window's title always shows where the API is, as scripts need it. */
export function windowTitle(pageTitle: string, apiUrl: string): string {
  const title = pageTitle.trim() || 'Session Desk';
  return `${title} — ${apiUrl}`;
}

export const PROBE_HEADER = 'x-sessiondesk-probe';

export type DevServerProbe = { ok: true } | { ok: false; reason: string };

/**
 * Under `npm run dev` the window loads the Vite dev server, which must proxy /api to this
 * app's server (electron.vite.config.ts; docs/guides/desktop-app.md). The probe proves it:
 * a sign-out request (harmless without a cookie) sent to the dev server with the dev
 * server's Origin must arrive at our own socket, carrying a one-time nonce, and be accepted
 * (204), which needs the proxy to rewrite Host and Origin. Any other program behind the
 * proxy (say, on port 4319 when this app took another) fails the check.
 */
export async function probeDevServer(
  devServerUrl: string,
  server: Server,
  timeoutMs = 5000,
): Promise<DevServerProbe> {
  const nonce = randomBytes(16).toString('hex');
  let arrived = false;
  const onRequest = (request: IncomingMessage) => {
    if (request.headers[PROBE_HEADER] === nonce) arrived = true;
  };
  server.prependListener('request', onRequest);
  try {
    const origin = new URL(devServerUrl).origin;
    const response = await fetch(`${origin}/api/auth/sign-out`, {
      method: 'POST',
      headers: { [PROBE_HEADER]: nonce, origin },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    if (!arrived) {
      return {
        ok: false,
        reason: `${origin}/api does not reach this app's server (answered ${response.status})`,
      };
    }
    if (response.status !== 204) {
      return {
        ok: false,
        reason: `${origin}/api reaches this app's server but is refused (${response.status}); the proxy must rewrite Host and Origin`,
      };
    }
    return { ok: true };
  } catch (err) {
    return {
      ok: false,
      reason: `${devServerUrl} did not answer (${err instanceof Error ? err.message : String(err)})`,
    };
  } finally {
    server.removeListener('request', onRequest);
  }
}
