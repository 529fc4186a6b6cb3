import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isUnsafeMethod(method: string): boolean {
  return !SAFE_METHODS.has(method);
}

/**
 * The Host values this server answers to: loopback names with the port the request
 * actually arrived on, plus any the user configured. Anything else may be a DNS
 * rebinding attack, where a web page's own host name resolves to 127.0.0.1.
 */
export function allowedHosts(port: number, extra: readonly string[]): Set<string> {
  return new Set([
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `[::1]:${port}`,
    ...extra.map((h) => h.toLowerCase()),
  ]);
}

export function createHostGuard(extraHosts: readonly string[]) {
  const cache = new Map<number, Set<string>>();
  return async function hostGuard(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const host = request.headers.host?.toLowerCase();
    const port = request.socket.localPort ?? 0;
    let allowed = cache.get(port);
    if (!allowed) {
      allowed = allowedHosts(port, extraHosts);
      cache.set(port, allowed);
    }
    // Node keeps the first of several Host lines; more than one is ambiguous (RFC 9112, 3.2).
    const hostLines = request.raw.rawHeaders.filter((v, i) => i % 2 === 0 && v.toLowerCase() === 'host');
    if (!host || !allowed.has(host) || hostLines.length > 1) {
      throw new AppError(403, 'forbidden_host', 'This server only answers requests addressed to localhost');
    }
  };
}

/** The server's own origin, as a browser on this host would send it. */
export function ownOrigin(request: FastifyRequest): string {
  return `http://${request.headers.host ?? ''}`;
}

/**
 * A browser names the page that sent a request in Origin (and Sec-Fetch-Site). An unsafe
 * request from any other origin, another localhost port included, is refused outright.
 */
export async function originGuard(request: FastifyRequest): Promise<void> {
  if (!isUnsafeMethod(request.method)) return;
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  if (
    (origin !== undefined && origin !== ownOrigin(request)) ||
    (site !== undefined && site !== 'same-origin' && site !== 'none')
  ) {
    throw new AppError(403, 'forbidden_origin', 'Requests from other origins are not accepted');
  }
}

/**
 * Cookie-authenticated writes must prove they come from the dashboard itself: a browser
 * always sends Origin (or Sec-Fetch-Site) on them, and only ours matches.
 */
export function requireSameOrigin(request: FastifyRequest): void {
  if (!isUnsafeMethod(request.method)) return;
  const fromUs =
    request.headers.origin === ownOrigin(request) || request.headers['sec-fetch-site'] === 'same-origin';
  if (!fromUs) {
    throw new AppError(
      403,
      'forbidden_origin',
      'Signed-in changes must come from the dashboard (Origin or Sec-Fetch-Site must be this server)',
    );
  }
}
