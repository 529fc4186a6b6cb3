import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { hostAllowed } from './network-proxy.js';

/**
 * Whether a run can reach a host (its model's API): over the workspace's allow-list when it has
 * one (the run's proxy connects from this machine, so a connection from here is the proxy's), else
 * as the run's programs would, through the proxy the environment names or straight.
 */

export type Reach =
  | { reachable: true }
  | {
      reachable: false;
      /** Why not: "connection refused", "not in this workspace's network allow-list", … */
      reason: string;
      /** The workspace's allow-list leaves the host out: no retry changes that. */
      notAllowed: boolean;
    };

export interface ReachOptions {
  /** The workspace's allow-list, where it is enforced. */
  allowedHosts?: readonly string[] | undefined;
  /** The agents' environment: its proxy variables, when there is no allow-list. */
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

const PROBE_TIMEOUT_MS = 3000;

/** What a failed connection's code means, in words. */
function said(err: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {
    ECONNREFUSED: 'the connection was refused (nothing listens there)',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name could not be resolved (no DNS answer)',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    ECONNRESET: 'the connection was reset',
  };
  return (err.code && words[err.code]) ?? err.message;
}

/** The host and port a URL names (its scheme's port when it names none), or undefined. */
export function hostAndPort(url: string): { host: string; port: number; https: boolean } | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
    const https = parsed.protocol === 'https:';
    const host = parsed.hostname.replace(/^\[(.*)\]$/u, '$1');
    return host ? { host, port: parsed.port ? Number(parsed.port) : https ? 443 : 80, https } : undefined;
  } catch {
    return undefined;
  }
}

/** The proxy the environment sends `host` through, as curl and Node's agents read it, or none. */
function proxyFor(env: NodeJS.ProcessEnv, host: string, https: boolean): URL | undefined {
  const pick = (...names: string[]) => names.map((n) => env[n]?.trim()).find(Boolean);
  const named = https
    ? pick('HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy')
    : pick('HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy');
  if (!named) return undefined;
  const bypass = (pick('NO_PROXY', 'no_proxy') ?? '').split(/[\s,]+/u).filter(Boolean);
  const name = host.toLowerCase();
  if (
    bypass.some(
      (entry) =>
        entry === '*' || name === entry.replace(/^\./u, '') || name.endsWith(`.${entry.replace(/^\./u, '')}`),
    )
  )
    return undefined;
  try {
    return new URL(named.includes('://') ? named : `http://${named}`);
  } catch {
    return undefined;
  }
}

function direct(host: string, port: number, timeoutMs: number): Promise<Reach> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reach: Reach) => {
      socket.destroy();
      resolve(reach);
    };
    socket.setTimeout(timeoutMs, () =>
      done({ reachable: false, reason: `no answer within ${timeoutMs / 1000} s`, notAllowed: false }),
    );
    socket.once('connect', () => done({ reachable: true }));
    socket.once('error', (err) => done({ reachable: false, reason: said(err), notAllowed: false }));
  });
}

function throughProxy(proxy: URL, host: string, port: number, timeoutMs: number): Promise<Reach> {
  return new Promise((resolve) => {
    const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const req = httpRequest({
      host: proxy.hostname.replace(/^\[(.*)\]$/u, '$1'),
      port: proxy.port ? Number(proxy.port) : 80,
      method: 'CONNECT',
      path: target,
      headers: { host: target },
      timeout: timeoutMs,
    });
    let settled = false;
    const done = (reach: Reach) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(reach);
    };
    req.once('connect', (res, socket) => {
      socket.destroy();
      done(
        res.statusCode === 200
          ? { reachable: true }
          : {
              reachable: false,
              reason: `the proxy ${proxy.host} answered ${res.statusCode ?? '?'} for ${target}`,
              notAllowed: false,
            },
      );
    });
    req.once('timeout', () =>
      done({
        reachable: false,
        reason: `the proxy ${proxy.host} did not answer within ${timeoutMs / 1000} s`,
        notAllowed: false,
      }),
    );
    req.once('error', (err) =>
      done({ reachable: false, reason: `the proxy ${proxy.host}: ${said(err)}`, notAllowed: false }),
    );
    req.end();
  });
}

/** Whether a run reaches `url`'s host and port now (a TCP connection, nothing sent). */
export async function reach(url: string, options: ReachOptions): Promise<Reach> {
  const target = hostAndPort(url);
  if (!target) return { reachable: false, reason: `${url} is not an http(s) URL`, notAllowed: false };
  const { host, port, https } = target;
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  if (options.allowedHosts) {
    if (!hostAllowed(options.allowedHosts, host, port))
      return {
        reachable: false,
        reason: `${host}:${port} is not in this workspace's network allow-list`,
        notAllowed: true,
      };
    return direct(host, port, timeoutMs);
  }
  const proxy = proxyFor(options.env, host, https);
  return proxy ? throughProxy(proxy, host, port, timeoutMs) : direct(host, port, timeoutMs);
}
