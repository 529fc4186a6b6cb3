import type { NetworkBridge } from '../types.js';

/**
 * The first program of a sandbox without a network of its own (the workspace lists the hosts
 * its agents may reach): a Node.js script that listens on 127.0.0.1:PORT of the sandbox's own
 * loopback, forwards each connection to the proxy's unix socket bound into the sandbox, and
 * runs the agent's program as its child with the proxy variables pointing at it, passing
 * signals on and ending as the program ended.
 */

/** Any port works: the sandbox's loopback is its own. */
export const BRIDGE_PORT = 3128;

const BRIDGE_SCRIPT = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, port, program, ...args] = process.argv.slice(1);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on('error', end);
  upstream.on('error', end);
  client.pipe(upstream).pipe(client);
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
