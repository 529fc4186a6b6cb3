import type { NetworkBridge } from '../types.js';

/**
 * The first program of a sandbox without a network of its own (the workspace lists the hosts
 * its agents may reach): a Node.js script that listens on 127.0.0.1:PORT of the sandbox's own
 * loopback, forwards each connection to the proxy's unix socket bound into the sandbox, and
 * runs the agent's program as its child with the proxy variables pointing at it, passing
 * signals on and ending as the program ended.
 *
 * The proxy variables send loopback through the proxy too (a listed `127.0.0.1:PORT` is the
 * machine's), but an agent may run a server of its own on the sandbox's loopback and call it
 * (OpenCode's, on 127.0.0.1:4096): a request for a loopback port that something in the sandbox
 * listens on is served there, by the bridge, and never reaches the proxy.
 */

/** Any port works: the sandbox's loopback is its own. */
export const BRIDGE_PORT = 3128;

const BRIDGE_SCRIPT = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, port, program, ...args] = process.argv.slice(1);
const joined = (a, b) => { const end = () => { a.destroy(); b.destroy(); }; a.on('error', end); b.on('error', end); a.pipe(b).pipe(a); };
const viaProxy = (client, head) => { const upstream = net.connect(socketPath); upstream.write(head); joined(client, upstream); };
// A request's loopback target inside the sandbox: CONNECT host:port, or an absolute http:// URL.
const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];
function loopbackTarget(line) {
  const connect = /^CONNECT (\\S+) HTTP\\/1\\.[01]$/.exec(line);
  const plain = /^([A-Z]+) (http:\\/\\/\\S+) (HTTP\\/1\\.[01])$/.exec(line);
  let url;
  try { url = new URL(connect ? 'http://' + connect[1] : plain ? plain[2] : ''); } catch { return undefined; }
  const host = url.hostname.replace(/^\\[(.*)\\]$/, '$1');
  const at = Number(url.port || 80);
  if (!LOOPBACK.includes(host) || at === Number(port)) return undefined;
  return { host: host === 'localhost' ? '127.0.0.1' : host, port: at, connect: Boolean(connect), plain };
}
function route(client, head, end) {
  const line = head.subarray(0, head.indexOf('\\r\\n')).toString('latin1');
  const target = end < 0 ? undefined : loopbackTarget(line);
  if (!target) return viaProxy(client, head);
  const local = net.connect(target.port, target.host);
  local.once('error', () => { local.destroy(); viaProxy(client, head); });
  local.once('connect', () => {
    local.removeAllListeners('error');
    const rest = head.subarray(end + 4);
    if (target.connect) client.write('HTTP/1.1 200 Connection Established\\r\\n\\r\\n');
    else {
      // As its own server sees a request: in origin form, and the last on this connection (a
      // proxy's connection may carry the next request to another host).
      const url = new URL(target.plain[2]);
      const headers = head.subarray(head.indexOf('\\r\\n') + 2, end).toString('latin1').split('\\r\\n')
        .filter((h) => h && !/^(connection|proxy-connection|keep-alive|proxy-authorization):/i.test(h));
      local.write(Buffer.from(target.plain[1] + ' ' + url.pathname + url.search + ' ' + target.plain[3] + '\\r\\n' +
        headers.join('\\r\\n') + '\\r\\nConnection: close\\r\\n\\r\\n', 'latin1'));
    }
    local.write(rest);
    joined(client, local);
    client.resume();
  });
}
const server = net.createServer((client) => {
  let head = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  const read = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\\r\\n\\r\\n');
    if (end < 0 && head.length < 65536) return;
    client.off('data', read);
    client.pause();
    route(client, head, end);
  };
  client.on('data', read);
});
server.on('error', (err) => {
  process.stderr.write('Session Desk network bridge: ' + err.message + '\\n');
  process.exit(126);
});
server.listen(Number(port), '127.0.0.1', () => {
  const proxy = 'http://127.0.0.1:' + port;
  const env = { ...process.env };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = proxy;
    env[name.toLowerCase()] = proxy;
  }
  env.NO_PROXY = '';
  env.no_proxy = '';
  const child = spawn(program, args, { stdio: 'inherit', env });
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const signal of signals) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(program + ': ' + err.message + '\\n');
    process.exit(err.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) {
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      // A signal Node.js ignores (SIGPIPE) still ends the bridge, with the shell's status.
      setImmediate(() => process.exit(128 + (require('node:os').constants.signals[signal] || 0)));
    } else process.exit(code ?? 1);
  });
});
`;

/** The command line that runs `program` behind the bridge. */
export function bridged(bridge: NetworkBridge, program: string, args: string[]): string[] {
  return [bridge.node, '-e', BRIDGE_SCRIPT, '--', bridge.socket, String(bridge.port), program, ...args];
}
