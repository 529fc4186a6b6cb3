/**
 * A team server's front as the docs deploy it: a certificate made here (a certificate authority
 * of our own and a server certificate it signed), and the nginx or Caddy configuration of
 * docs/reference/team-server.md, taken from the page itself and pointed at this test's ports,
 * certificate and upstreams, run as the real program. Plain Node: no test runner.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { rawRequest } from './raw-request.js';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';
import { createEventParser } from './events.js';
import { until } from './until.js';

const run = promisify(execFile);

export interface Certificates {
  /** The certificate authority's certificate: what a client trusts (NODE_EXTRA_CA_CERTS). */
  caFile: string;
  ca: string;
  certFile: string;
  keyFile: string;
  /** The server key's SPKI hash, base64: what Chromium is told to accept. */
  spkiHash: string;
}

/** A certificate authority and a certificate it signed for `localhost` and 127.0.0.1. */
export async function makeCertificates(dir: string): Promise<Certificates> {
  mkdirSync(dir, { recursive: true });
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Session Desk test CA',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    at('server.key'),
    '-out',
    at('server.csr'),
  );
  writeFileSync(
    at('server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    at('server.ext'),
    '-out',
    at('server.pem'),
  );
  const spki = await run('sh', [
    '-c',
    `openssl x509 -in '${at('server.pem')}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
  ]);
  return {
    caFile: at('ca.pem'),
    ca: readFileSync(at('ca.pem'), 'utf8'),
    certFile: at('server.pem'),
    keyFile: at('server.key'),
    spkiHash: spki.stdout.trim(),
  };
}

/** The fenced block of that language in docs/reference/team-server.md: the configuration people copy. */
export function documentedConfig(language: 'nginx' | 'caddy'): string {
  const page = readFileSync(join(ROOT, 'docs', 'reference', 'team-server.md'), 'utf8');
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)\\n\\s*```', 'u').exec(page)?.[1];
  if (block === undefined) throw new Error(`docs/reference/team-server.md has no ${language} block`);
  // The block sits in a list item: its lines are indented as the fence is.
  const indent = /^( *)/u.exec(block)?.[1]?.length ?? 0;
  return block
    .split('\n')
    .map((line) => line.slice(Math.min(indent, /^ */u.exec(line)?.[0].length ?? 0)))
    .join('\n');
}

/** Replaces `from` in `text`, failing if the documented configuration no longer holds it. */
function replaced(text: string, from: string | RegExp, to: string): string {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) throw new Error(`the documented configuration no longer has ${String(from)}`);
  return text.replace(from, to);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface RunningProxy {
  /** `https://localhost:PORT`: the public URL. */
  url: string;
  port: number;
  /** Everything the proxy wrote to its logs, for a failing test's message. */
  logs(): string;
  stop(): Promise<void>;
}

/** Waits for a TLS answer on the port, or for the program to end. */
async function answering(url: string, ca: string, child: ChildProcess, logs: () => string): Promise<void> {
  let ended = false;
  child.once('exit', () => (ended = true));
  const state = await until(
    async () => {
      if (ended) return 'ended';
      try {
        await rawRequest(`${url}/api/health`, { ca });
        return 'answering';
      } catch {
        return 'not yet';
      }
    },
    (value) => value !== 'not yet',
    20_000,
  );
  if (state !== 'answering')
    throw new Error(`the proxy ${state === 'ended' ? 'ended' : 'did not answer'}:\n${logs()}`);
}

/** Options both proxies take. */
export interface ProxyOptions {
  dir: string;
  certs: Certificates;
  upstreams: string[];
  /** The port it listens on (that of the servers' public URL); a free one by default. */
  port?: number;
}

/**
 * Runs a proxy's program until it answers over TLS at `https://localhost:PORT`: its output (and
 * what `moreLogs` reads) is kept for a failing test's message, and `stop` ends it.
 */
async function launch(
  program: string,
  args: string[],
  options: { port: number; ca: string; env?: NodeJS.ProcessEnv; moreLogs?: () => string },
): Promise<RunningProxy> {
  const child = spawn(program, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.env ? { env: options.env } : {}),
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const logs = () => `${output}${options.moreLogs?.() ?? ''}`;
  const url = `https://localhost:${options.port}`;
  await answering(url, options.ca, child, logs);
  return {
    url,
    port: options.port,
    logs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * nginx with the documented server block, its upstreams this test's processes, listening on a
 * free port of 127.0.0.1. The main configuration around it is Debian's in substance: the block
 * goes in `http { … }` as a file of sites-enabled does.
 */
export async function startNginx(options: ProxyOptions): Promise<RunningProxy> {
  const { dir, certs, upstreams } = options;
  mkdirSync(dir, { recursive: true });
  const port = options.port ?? (await freePort());
  let site = documentedConfig('nginx');
  site = replaced(
    site,
    /( *)server 127\.0\.0\.1:4320;\n *server 127\.0\.0\.1:4321;/u,
    upstreams.map((upstream) => `    server ${upstream};`).join('\n'),
  );
  site = replaced(site, 'listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`);
  site = replaced(site, 'server_name team.example.com;', 'server_name localhost;');
  site = replaced(site, '/etc/ssl/certs/team.example.com.pem', certs.certFile);
  site = replaced(site, '/etc/ssl/private/team.example.com.key', certs.keyFile);
  const conf = join(dir, 'nginx.conf');
  // As root, nginx's workers would run as nobody, who cannot write this test's folders.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  writeFileSync(
    conf,
    `${user}worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} info;
events { worker_connections 256; }
http {
  access_log ${join(dir, 'access.log')};
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
${site}
}
`,
  );
  const errorLog = join(dir, 'error.log');
  return launch('nginx', ['-p', dir, '-e', errorLog, '-c', conf, '-g', 'daemon off;'], {
    port,
    ca: certs.ca,
    moreLogs: () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''),
  });
}

/** Caddy with the documented site, its certificate this test's (no ACME), its upstreams this test's processes. */
export async function startCaddy(options: ProxyOptions): Promise<RunningProxy> {
  const { dir, certs, upstreams } = options;
  mkdirSync(dir, { recursive: true });
  const port = options.port ?? (await freePort());
  let site = documentedConfig('caddy');
  site = replaced(
    site,
    /^team\.example\.com \{/mu,
    `https://localhost:${port} {\n    tls ${certs.certFile} ${certs.keyFile}`,
  );
  site = replaced(
    site,
    'reverse_proxy 127.0.0.1:4320 127.0.0.1:4321',
    `reverse_proxy ${upstreams.join(' ')}`,
  );
  const file = join(dir, 'Caddyfile');
  writeFileSync(
    file,
    `{
    admin off
    auto_https disable_redirects
    storage file_system ${join(dir, 'storage')}
}

${site}
`,
  );
  return launch('caddy', ['run', '--config', file, '--adapter', 'caddyfile'], {
    port,
    ca: certs.ca,
    env: {
      ...process.env,
      HOME: dir,
      XDG_DATA_HOME: join(dir, 'data'),
      XDG_CONFIG_HOME: join(dir, 'config'),
    },
  });
}

/**
 * An event stream over HTTPS, parsed as a browser parses one: each event as it arrives, and
 * the raw text (keep-alive comments included), until `close`.
 */
export function httpsEventStream(url: string, init: { ca: string; headers: Record<string, string> }) {
  const received: Array<{ event: string; data: unknown }> = [];
  let raw = '';
  let statusCode = 0;
  const parse = createEventParser((event) =>
    received.push({ event: event.event ?? 'message', data: JSON.parse(event.data) as unknown }),
  );
  const req = httpsRequest(url, {
    ca: init.ca,
    agent: false,
    headers: { accept: 'text/event-stream', ...init.headers },
  });
  const opened = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      statusCode = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        parse(chunk);
      });
      resolve();
    });
    req.on('error', reject);
  });
  req.end();
  return {
    opened,
    status: () => statusCode,
    received,
    raw: () => raw,
    close: () => req.destroy(),
  };
}
