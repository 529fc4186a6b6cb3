import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { isLoopbackAddress, type PublicUrl } from '../deployment.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a load balancer polls (routes/health.ts): the one route answered whatever Host is named. */
export const HEALTH_PATH = '/api/health';

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

/** The loopback address a request arrived on, when it is not 127.0.0.1 (`serve --host 127.0.0.2`). */
function otherLoopback(address: string | undefined): string | null {
  const v4 = address?.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 !== undefined && v4.startsWith('127.') && v4 !== '127.0.0.1' ? v4 : null;
}

/** Where people reach the server, when not on this machine alone (`serve --public-url`). */
export interface Deployment {
  publicUrl?: PublicUrl;
  /** Whether a peer is a proxy whose forwarded headers are believed (`--trust-proxy`). */
  trustsProxy?: (address: string) => boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The origin a browser page of this server has: the public URL's, else the Host's. */
    ownOrigin: string;
  }
}

/** Whether a request came through a proxy the administrator named: only then are its forwarded headers news. */
export function cameThroughProxy(request: FastifyRequest, deployment: Deployment): boolean {
  const peer = request.socket.remoteAddress;
  return (
    peer !== undefined &&
    deployment.trustsProxy?.(peer) === true &&
    request.headers['x-forwarded-for'] !== undefined
  );
}

/**
 * Refuses (403, before anything else) a request addressed to a host that is not this server.
 * Without a public URL that is any name but loopback's. With one, a request may name the public
 * host, or, straight from this machine (its scripts and health checks, not through the proxy),
 * a loopback name: a proxy that rewrites Host to its upstream's would otherwise make any name
 * pass, and the server could no longer tell what the browser asked for.
 */
export function createHostGuard(extraHosts: readonly string[], deployment: Deployment = {}) {
  const cache = new Map<string, Set<string>>();
  const publicUrl = deployment.publicUrl;
  return async function hostGuard(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    // A load balancer polls each upstream by its own address; the answer holds nothing.
    if (request.raw.url === HEALTH_PATH && (request.method === 'GET' || request.method === 'HEAD')) return;
    const host = request.headers.host?.toLowerCase();
    const port = request.socket.localPort ?? 0;
    const address = otherLoopback(request.socket.localAddress);
    const cacheKey = `${address ?? ''}:${port}`;
    let allowed = cache.get(cacheKey);
    if (!allowed) {
      // A server listening on another loopback address also answers to that address.
      allowed = allowedHosts(port, address ? [...extraHosts, `${address}:${port}`] : extraHosts);
      cache.set(cacheKey, allowed);
    }
    // Node keeps the first of several Host lines; more than one is ambiguous (RFC 9112, 3.2).
    const hostLines = request.raw.rawHeaders.filter((v, i) => i % 2 === 0 && v.toLowerCase() === 'host');
    const targetHosts = publicUrl ? new Set([...allowed, publicUrl.host]) : allowed;
    const single =
      host !== undefined && hostLines.length === 1 && allowedTarget(request.raw.url, targetHosts);
    if (publicUrl) {
      request.ownOrigin = publicUrl.origin;
      if (single && host === publicUrl.host) return;
      const local = isLoopbackAddress(request.socket.remoteAddress) && !cameThroughProxy(request, deployment);
      if (single && local && allowed.has(host)) return;
      throw new AppError(
        403,
        'forbidden_host',
        `This server answers at ${publicUrl.origin}, and on loopback to this machine's own programs; ` +
          `this request was addressed to ${host === undefined ? 'no host' : JSON.stringify(host)}. ` +
          'Behind a reverse proxy, pass on the Host the browser sent (nginx: proxy_set_header Host $http_host).',
      );
    }
    if (!single || !allowed.has(host)) {
      throw new AppError(403, 'forbidden_host', 'This server only answers requests addressed to localhost');
    }
    request.ownOrigin = `http://${host}`;
  };
}

/**
 * An absolute-form request target (`GET http://evil/api/sessions`) names its own host, which
 * a proxy-unaware server would otherwise ignore: it must be one of ours too.
 */
function allowedTarget(target: string | undefined, allowed: Set<string>): boolean {
  if (target === undefined || target.startsWith('/') || target === '*') return true;
  try {
    const url = new URL(target);
    return (url.protocol === 'http:' || url.protocol === 'https:') && allowed.has(url.host.toLowerCase());
  } catch {
    return false;
  }
}

/** The server's own origin, as a browser showing its pages sends it. */
export function ownOrigin(request: FastifyRequest): string {
  return request.ownOrigin || `http://${request.headers.host ?? ''}`;
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
