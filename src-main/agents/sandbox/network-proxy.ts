import { mkdtempSync, rmSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import type { Duplex } from 'node:stream';
import type { AssistantMessage } from '../../../src-shared/sessions.js';
import { notice } from '../output-caps.js';

/**
 * The proxy through which agents' programs reach the hosts their workspace allows. A run
 * with an allow-list has no network of its own (bubblewrap's `--unshare-net`): the only way
 * out is a unix socket of this proxy, bound into its sandbox, which takes HTTP CONNECT (for
 * https and other TLS) and absolute-form requests (plain http), each checked against the list.
 */

/** Whether `host` (a name or IPv4 address, as the program asked) on `port` is in the list. */
export function hostAllowed(patterns: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/u, '');
  return patterns.some((pattern) => {
    const [hostPart = '', portPart] = pattern.split(':');
    if (portPart !== undefined && Number(portPart) !== port) return false;
    if (hostPart.startsWith('*.')) return name.endsWith(hostPart.slice(1));
    return name === hostPart;
  });
}

/** The text a refused program gets: the host, and the setting that refused it. */
export function refusalText(host: string, port: number): string {
  return (
    `Session Desk refused the connection to ${host}:${port}: it is not in this workspace's ` +
    "network allow-list (Settings › Agent › Network, the workspace's allowedHosts).\n"
  );
}

/** Called with each connection a run's proxy refuses. */
export type Refused = (host: string, port: number) => void;

/**
 * A run's notices of what its proxy refused, once per host and port: a program may report a
 * refusal as no more than "fetch failed" (Gemini CLI, then retrying for minutes), so the
 * transcript says itself which host the list left out. Information, not an error: what the
 * CLIs reach besides their model (telemetry, update checks) is refused as well, and they go on.
 * `end` waits for the notices being written, before the run's result; nothing is said after it.
 */
export function refusalNotices(append: (message: AssistantMessage) => Promise<void>): {
  refused: Refused;
  end(): Promise<void>;
} {
  const said = new Set<string>();
  let writing = Promise.resolve();
  let open = true;
  return {
    refused: (host, port) => {
      const target = `${host}:${port}`;
      if (!open || said.has(target)) return;
      said.add(target);
      writing = writing.then(() => append(notice(refusalText(host, port).trimEnd(), 'info')));
    },
    end: () => {
      open = false;
      return writing;
    },
  };
}

/** `host:port` of a CONNECT, or the URL of an absolute-form request: its host and port. */
function targetOf(url: string, connectPort?: number): { host: string; port: number } | undefined {
  try {
    const parsed = new URL(connectPort === undefined ? url : `http://${url}`);
    if (connectPort === undefined && parsed.protocol !== 'http:') return undefined;
    const host = parsed.hostname.replace(/^\[(.*)\]$/u, '$1');
    const port = parsed.port ? Number(parsed.port) : (connectPort ?? 80);
    return host ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}

/** Headers meant for this hop only, not passed on. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function passedOn(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name)));
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(text);
}

function answerRaw(socket: Duplex, status: string, text: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Connection: close\r\n\r\n${text}`,
  );
}

/** One run's proxy: its socket, and how to end it with every connection it holds. */
export interface ProxyLease {
  socket: string;
  close(): Promise<void>;
}

/**
 * The proxies of the runs going on, one unix socket each in a private folder (0700) outside
 * the data directory and the sandboxes; the folder exists while a run uses it.
 */
export class NetworkProxies {
  private folder: string | undefined;
  private leases = 0;
  private made = 0;

  constructor(private readonly keptOut: () => string[]) {}

  async open(allowed: readonly string[], refused: Refused = () => undefined): Promise<ProxyLease> {
    this.folder ??= this.makeFolder();
    const folder = this.folder;
    this.made += 1;
    const socket = join(folder, `run-${this.made}.sock`);
    const connections = new Set<Duplex>();
    const hold = (s: Duplex) => {
      connections.add(s);
      s.once('close', () => connections.delete(s));
    };

    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const target = targetOf(req.url ?? '');
      if (!target) {
        answer(res, 400, "Session Desk's network proxy takes absolute http:// URLs, or CONNECT for https.\n");
        return;
      }
      if (!hostAllowed(allowed, target.host, target.port)) {
        refused(target.host, target.port);
        answer(res, 403, refusalText(target.host, target.port));
        return;
      }
      const url = new URL(req.url ?? '');
      const upstream = httpRequest(
        {
          host: target.host,
          port: target.port,
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers: passedOn(req.headers),
          agent: false,
        },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, passedOn(reply.headers));
          reply.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        if (res.headersSent) res.destroy();
        else
          answer(
            res,
            502,
            `Session Desk's proxy could not reach ${target.host}:${target.port}: ${err.message}\n`,
          );
      });
      req.pipe(upstream);
    });
    server.on('connection', hold);
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
      hold(client);
      client.on('error', () => client.destroy());
      const target = targetOf(req.url ?? '', 443);
      if (!target) {
        answerRaw(client, '400 Bad Request', 'CONNECT takes host:port.\n');
        return;
      }
      if (!hostAllowed(allowed, target.host, target.port)) {
        refused(target.host, target.port);
        answerRaw(client, '403 Forbidden', refusalText(target.host, target.port));
        return;
      }
      const upstream: Socket = connect(target.port, target.host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      hold(upstream);
      upstream.on('error', (err) => {
        if (upstream.readyState === 'opening')
          answerRaw(
            client,
            '502 Bad Gateway',
            `Session Desk's proxy could not reach ${target.host}:${target.port}: ${err.message}\n`,
          );
        else client.destroy();
      });
      client.on('close', () => upstream.destroy());
    });

    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.leases += 1;
    let closed = false;
    return {
      socket,
      close: async () => {
        if (closed) return;
        closed = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const connection of connections) connection.destroy();
        await stopped;
        this.leases -= 1;
        if (this.leases === 0 && this.folder === folder) {
          this.folder = undefined;
          rmSync(folder, { recursive: true, force: true });
        }
      },
    };
  }

  /** A private folder (mkdtemp makes it 0700) in the system's temporary folder. */
  private makeFolder(): string {
    const base = tmpdir();
    for (const kept of this.keptOut()) {
      const rel = relative(kept, base);
      if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)))
        throw new Error(
          `The temporary folder ${base} is inside ${kept}; set TMPDIR elsewhere for the network allow-list's proxy.`,
        );
    }
    return mkdtempSync(join(base, 'sessiondesk-net-'));
  }
}
