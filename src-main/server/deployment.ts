import { BlockList, isIP } from 'node:net';

/**
 * Where people reach a server that is not only this machine's: the public URL a reverse proxy
 * answers at (`serve --public-url`), and the proxies whose forwarded headers are believed
 * (`--trust-proxy`). Both are checked here, once, for the command line and the server alike.
 */

export class DeploymentError extends Error {}

/** The address people use, as the server checks Host and Origin against it and prints it. */
export interface PublicUrl {
  /** `https://team.example.com` or `https://team.example.com:8443`: no path, no trailing slash. */
  origin: string;
  /** The Host a request addressed to it carries: `team.example.com`, or with its port when not the default. */
  host: string;
  /** Whether it is https: cookies are then `Secure`. */
  secure: boolean;
}

const LOOPBACK_NAME = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/u;

/**
 * `https://HOST[:PORT]`; `http://` only for a loopback host (trying a proxy on one machine),
 * since a cookie sent over plain http to another machine can be read on the way. A path, a
 * query, a fragment or credentials have no place in it: the server answers at its root.
 */
export function parsePublicUrl(text: string): PublicUrl {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new DeploymentError(`the public URL must be https://HOST[:PORT], not "${text}"`);
  }
  const loopback = LOOPBACK_NAME.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new DeploymentError(
      `the public URL must be https://HOST[:PORT] (http:// only for 127.0.0.1 or localhost), not "${text}"`,
    );
  }
  if (url.username || url.password) {
    throw new DeploymentError(`the public URL must not hold a user name or password: "${text}"`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || trimmed.endsWith('?')) {
    throw new DeploymentError(
      `the public URL must be the server's root, without a path, query or fragment: ${url.origin}, not "${text}"`,
    );
  }
  return { origin: url.origin, host: url.host, secure: url.protocol === 'https:' };
}

/** An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), or `loopback` for 127.0.0.0/8 and ::1. */
export type TrustedProxy = string;

/**
 * A comma-separated list of addresses and ranges whose `X-Forwarded-For` and `X-Forwarded-Proto`
 * are believed. Each entry is checked here, so that a typo is a usage error rather than a proxy
 * silently not trusted (or, worse, everyone trusted).
 */
export function parseTrustedProxies(text: string): TrustedProxy[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) {
    throw new DeploymentError('--trust-proxy needs an address, a range (ADDR/BITS) or "loopback"');
  }
  for (const entry of entries) {
    if (entry === 'loopback') continue;
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d{1,3}$/u.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new DeploymentError(
        `--trust-proxy takes IP addresses, ranges (ADDR/BITS) and "loopback", not "${entry}"`,
      );
    }
  }
  return entries;
}

/** Whether `address` (as a socket reports it) is one of `proxies`. */
export function trustsAddress(proxies: readonly TrustedProxy[]): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of proxies) {
    if (entry === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const type = isIP(plain);
    return type !== 0 && list.check(plain, type === 6 ? 'ipv6' : 'ipv4');
  };
}

/** Whether a socket's address is this machine (127.0.0.0/8, ::1, or either mapped). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** Whether a `--host` names this machine only. */
export function isLoopbackHost(host: string): boolean {
  return /^(127(?:\.\d{1,3}){3}|::1|localhost)$/u.test(host);
}
