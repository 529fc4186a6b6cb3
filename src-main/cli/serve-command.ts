import { join, resolve } from 'node:path';
import { systemClock } from '../clock.js';
import { createEventLog, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../event-log.js';
import { PROJECT_ROOT, resolveDataDir } from '../paths.js';
import { DataDirLockedError } from '../store/lock.js';
import { parseDatabaseUrl } from '../store-postgres/connect.js';
import { readServerInfo } from '../server-file.js';
import { PortInUseError, startServer } from '../server/start.js';
import { DEMO, ownAccountCount } from '../demo/people.js';
import { readDemoSignIn } from '../demo/sign-in.js';
import { agentConfigFromEnv, parseMaxRuns } from '../agents/run/config.js';
import { checkSandboxRoot, defaultSandboxRoot, SandboxRootError } from '../agents/sandbox/sandbox-root.js';
import { CliError } from './admin-target.js';
import { parse, print, version } from './command-line.js';
import { identityProviderOf, refuseSecretOption, signInChoice } from './identity-options.js';
import { npmGone, startedByNohup } from './parent-watch.js';
import { asSentence, databaseUrlOf, describeDatabase } from './team-database.js';
import { UsageError } from './usage.js';
import {
  DeploymentError,
  isLoopbackHost,
  parsePublicUrl,
  parseTrustedProxies,
  type PublicUrl,
} from '../server/deployment.js';

/**
 * `sessiondesk serve`: the one command that keeps running. Its options checked before anything
 * opens, the server started, the ways it stops (signals, and npm going away when it runs under
 * `npx` or `npm run`), and what it prints once it listens: the URL to open and how to sign in.
 */

function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A setting from the environment that must be a whole number of `unit`, at least `min`; unset, undefined. */
function wholeNumberFromEnv(name: string, min: number, unit: string): number | undefined {
  const text = process.env[name]?.trim();
  if (!text) return undefined;
  const value = Number(text);
  if (!(Number.isInteger(value) && value >= min)) {
    throw new CliError(`${name} must be a whole number of ${unit}, at least ${min}, not "${text}"`);
  }
  return value;
}

/** Where people reach the server: `--public-url`, `--trust-proxy`, and the `--host` they allow. */
function deploymentOf(
  v: Record<string, unknown>,
  host: string,
  databaseUrl: string | undefined,
): { publicUrl?: PublicUrl; trustProxy?: string[] } {
  const publicText =
    typeof v['public-url'] === 'string'
      ? v['public-url']
      : process.env.SESSIONDESK_PUBLIC_URL?.trim() || undefined;
  const proxyText =
    typeof v['trust-proxy'] === 'string'
      ? v['trust-proxy']
      : process.env.SESSIONDESK_TRUST_PROXY?.trim() || undefined;
  let publicUrl: PublicUrl | undefined;
  let trustProxy: string[] | undefined;
  try {
    if (publicText !== undefined) publicUrl = parsePublicUrl(publicText);
    if (proxyText !== undefined) trustProxy = parseTrustedProxies(proxyText);
  } catch (err) {
    if (err instanceof DeploymentError) throw new UsageError(err.message, 'serve');
    throw err;
  }
  // A server other machines reach is a team server: its record is in PostgreSQL, its address
  // the public URL the proxy answers at. The desktop and a plain serve stay on loopback.
  if (!isLoopbackHost(host) && (databaseUrl === undefined || publicUrl === undefined)) {
    throw new UsageError(
      `--host ${host} is not a loopback address: a server other machines reach needs --database and --public-url ` +
        '(a team server behind a reverse proxy, docs/reference/team-server.md); on one machine use 127.0.0.1, ::1 or localhost',
      'serve',
    );
  }
  return { ...(publicUrl ? { publicUrl } : {}), ...(trustProxy ? { trustProxy } : {}) };
}

export async function serve(args: string[]): Promise<void> {
  refuseSecretOption(args);
  const v = parse('serve', args);
  // Whoever started it under nohup asked it to outlive the terminal: neither the hang-up nor npm
  // going away stops it then.
  const nohup = startedByNohup();
  // Watched from the start: npm going away while the data opens is seen all the same.
  const npmStopped = nohup ? null : npmGone();
  const host = String(v.host);
  const portText = String(v.port).trim();
  if (!/^\d+$/u.test(portText))
    throw new UsageError(`--port must be a number, not "${String(v.port)}"`, 'serve');
  const port = Number(portText);
  if (port > 65535) throw new UsageError(`--port must be 0 to 65535, not ${port}`, 'serve');
  const level = String(v['log-level']) as LogLevel;
  if (!LOG_LEVELS.includes(level))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${level}`, 'serve');
  const format = String(v['log-format']) as LogFormat;
  if (!LOG_FORMATS.includes(format))
    throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, not ${format}`, 'serve');
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  const databaseUrl = databaseUrlOf(v.database, 'serve');
  const deployment = deploymentOf(v, host, databaseUrl);
  if (databaseUrl !== undefined && v.demo) {
    throw new UsageError(
      '--demo makes a demo workspace in a data directory, not in --database: leave one out',
      'serve',
    );
  }
  let maxRuns: number | undefined;
  if (typeof v['max-runs'] === 'string') {
    try {
      maxRuns = parseMaxRuns(v['max-runs'], '--max-runs');
    } catch (err) {
      throw new UsageError((err as Error).message, 'serve');
    }
  }
  let agents;
  try {
    agents = agentConfigFromEnv(process.env);
    if (typeof v['sandbox-dir'] === 'string') agents.sandboxRoot = resolve(v['sandbox-dir']);
    checkSandboxRoot(agents.sandboxRoot ?? defaultSandboxRoot(dataDir), dataDir);
    if (maxRuns !== undefined) agents.maxRuns = maxRuns;
  } catch (err) {
    if (err instanceof SandboxRootError) throw new UsageError(err.message, 'serve');
    throw new CliError(err instanceof Error ? err.message : String(err));
  }

  const signIn = signInChoice(v, process.env);
  const snapshotAfterBytes = wholeNumberFromEnv('SESSIONDESK_SNAPSHOT_AFTER_BYTES', 65536, 'bytes');
  const searchTimeLimitMs = wholeNumberFromEnv('SESSIONDESK_SEARCH_TIME_LIMIT_MS', 1, 'milliseconds');

  const logger = createEventLog({ level, format, stream: process.stderr, clock: systemClock });
  const identityProvider = await identityProviderOf(signIn);
  const server = await startServer({
    agents,
    demo: v.demo === true,
    dataDir,
    host,
    port,
    rendererDir: join(PROJECT_ROOT, 'out', 'renderer'),
    clock: systemClock,
    logger,
    version: version(),
    ...(snapshotAfterBytes === undefined ? {} : { snapshotAfterBytes }),
    ...(searchTimeLimitMs === undefined ? {} : { searchTimeLimitMs }),
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    ...(deployment.publicUrl ? { publicUrl: deployment.publicUrl.origin } : {}),
    ...(deployment.trustProxy ? { trustProxy: deployment.trustProxy } : {}),
    ...(identityProvider ? { identityProvider } : {}),
    passwordSignIn: signIn.passwordSignIn,
  }).catch((err: unknown) => {
    // A database that cannot be reached, or that a newer version migrated, is a sentence.
    const sentence = asSentence(err);
    if (sentence !== err) throw sentence;
    // The port or the data directory is taken: if by Session Desk on this very directory, say so.
    if (err instanceof PortInUseError || err instanceof DataDirLockedError) {
      const running = readServerInfo(dataDir)?.info;
      if (running && processRunning(running.pid)) {
        throw new CliError(
          `Session Desk is already running on this data directory, at ${running.url} (pid ${running.pid}). ` +
            'Open that URL, or stop it first.',
        );
      }
    }
    throw err;
  });
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${reason}: stopping`, { event: 'server.stopping', reason });
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error(`could not close cleanly: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  // Listened for before the first line: a script may signal as soon as it reads the URL.
  // SIGHUP too: a closed terminal or a service manager's reload must not leave the directory
  // locked, unless nohup asked for the hang-up to be ignored (Node itself no longer ignores it).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
  process.on('SIGHUP', () => {
    if (nohup) logger.info('SIGHUP ignored: started with nohup', { event: 'server.hangup-ignored' });
    else stop('SIGHUP');
  });
  void npmStopped?.then((pid) => stop(`npm, which started it (pid ${pid}), is gone`));
  // Like Jupyter's: the token in the URL is what lets this browser set up and open the demo.
  print(
    deployment.publicUrl
      ? `Session Desk is running at ${deployment.publicUrl.origin} (this process listens on ${server.url})`
      : `Session Desk is running at ${server.launchUrl}`,
  );
  if (databaseUrl === undefined) print(`Data directory: ${dataDir}`);
  else {
    print(`Database: ${describeDatabase(parseDatabaseUrl(databaseUrl))}; this process's files in ${dataDir}`);
  }
  if (identityProvider) {
    const also = signIn.passwordSignIn ? ', or with a password' : ' only: password sign-in is off';
    print(`Sign-in through the identity provider ${identityProvider.provider.displayName}${also}.`);
  }
  if (v.demo) {
    print(`Demo workspace (sample data): organizationId ${DEMO.organizationId}`);
    const signIn = readDemoSignIn(dataDir);
    if (signIn) print(`Demo sign-in: ${signIn.email} / ${signIn.password} (or open the URL above)`);
  }
  if (server.setupCode !== undefined) {
    print(
      `No account yet: open ${server.launchUrl} and type the setup code ${server.setupCode} ` +
        `(any process of this server takes it, for 24 hours), or make the owner with "sessiondesk user create${databaseUrl === undefined ? '' : ' --database …'}".`,
    );
  } else if ((await ownAccountCount(server.storage.repos)) === 0) {
    print(
      v.demo
        ? 'To use your own account instead, open the URL and choose "Create your own owner account".'
        : 'No account yet: open the URL (with its token) to create the owner account and a first workspace.',
    );
  } else {
    print('Sign in at the URL with your account (add one with "sessiondesk user create").');
  }
  const logged = {
    debug: 'every request too',
    info: 'sessions, sign-ins, refused requests and errors',
    warn: 'warnings and errors',
    error: 'errors',
    silent: 'nothing',
  }[level];
  print(
    `Logging ${logged} to stderr${format === 'json' ? ' as JSON lines' : ''}` +
      `${level === 'debug' ? '' : ' (every request: --log-level debug)'}. Stop with Ctrl+C.`,
  );
}
