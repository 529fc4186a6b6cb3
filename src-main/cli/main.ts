import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import {
  AddMemberBodySchema,
  CreateKeyBodySchema,
  CreateUserBodySchema,
  CreateWorkspaceBodySchema,
} from '../../src-shared/accounts.js';
import { DEFAULT_PORT } from '../../src-shared/constants.js';
import { systemClock, type Logger } from '../clock.js';
import { createEventLog, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../event-log.js';
import { AppError } from '../errors.js';
import { PROJECT_ROOT, resolveDataDir } from '../paths.js';
import { DataDamagedError, StoreUnavailableError } from '../store/store.js';
import { DataDirLockedError } from '../store/lock.js';
import { readServerInfo } from '../server-file.js';
import { describeCounts } from '../data/database.js';
import { repairDataDir, runDoctor } from '../data/doctor.js';
import { formatBytes, formatDoctorReport } from '../data/doctor-report.js';
import { EXPORT_FORMATS, type ExportFormat } from '../data/format.js';
import { formatImportReport, ImportInputError } from '../data/import.js';
import { restoreBackup, RestoreRefusedError } from '../data/restore.js';
import { BackupCheckError, checkBackupStream, type CheckedBackup } from '../data/backup.js';
import { TarError } from '../data/tar.js';
import { openDataTarget, type DataTarget } from './data-target.js';
import { fileSink, stdoutSink } from './output.js';
import { PortInUseError, startServer } from '../server/start.js';
import { DEMO, ownAccountCount } from '../demo/seed.js';
import { readDemoSignIn } from '../demo/sign-in.js';
import { agentConfigFromEnv, parseMaxRuns } from '../agents/config.js';
import { CliError, openAdminTarget, type AdminTarget } from './admin-target.js';
import { historyImport, historySources } from './history-command.js';
import { parentGone } from './parent-watch.js';
import { HistoryImportBodySchema } from '../../src-shared/history.js';
import { GROUPS, USAGE, UsageError, type CommandName } from './usage.js';
import { closest } from './did-you-mean.js';
import { createRepositories } from '../store/repositories.js';
import { agentCommandList, agentCommandRemove, agentCommandSet } from './agent-commands.js';
import { NamedCommandsError } from '../agents/named-commands.js';
import { DataDirPermissionError } from '../data-dir-permissions.js';
import { checkSandboxRoot, defaultSandboxRoot, SandboxRootError } from '../agents/sandbox-root.js';

const stderrLogger: Logger = {
  info: (msg) => process.stderr.write(`sessiondesk: ${msg}\n`),
  warn: (msg) => process.stderr.write(`sessiondesk: warning: ${msg}\n`),
  error: (msg) => process.stderr.write(`sessiondesk: error: ${msg}\n`),
};

type Options = NonNullable<ParseArgsConfig['options']>;
const common: Options = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } };

function parse(command: CommandName, args: string[], options: Options) {
  const all = { ...common, ...options };
  try {
    return parseArgs({ args, options: all, strict: true, allowPositionals: false }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Node says "Unknown option '--prot'. …": say which option was probably meant.
    const unknown = /^Unknown option '--([^'=]+)'/u.exec(message)?.[1];
    if (unknown !== undefined) {
      const meant = closest(unknown, Object.keys(all));
      throw new UsageError(
        `unknown option --${unknown}${meant ? ` (did you mean --${meant}?)` : ''}`,
        command,
      );
    }
    throw new UsageError(message, command);
  }
}

function required(command: CommandName, values: Record<string, unknown>, ...names: string[]): void {
  const missing = names.filter((n) => typeof values[n] !== 'string');
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((n) => `--${n}`).join(', ')}`, command);
}

/** Validates option values with the same schemas the server uses. */
function validate<S extends z.ZodType>(command: CommandName, schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || 'value'} ${i.message}`);
    throw new UsageError(problems.join('; '), command);
  }
  return result.data;
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function withTarget(dataDirFlag: unknown, run: (target: AdminTarget) => Promise<void>): Promise<void> {
  const target = await openAdminTarget(resolveDataDir(dataDirFlag as string | undefined), stderrLogger);
  try {
    await run(target);
  } finally {
    await target.close();
  }
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|::1|localhost)$/u;

async function serve(args: string[]): Promise<void> {
  const v = parse('serve', args, {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: String(DEFAULT_PORT) },
    'log-level': { type: 'string', default: 'info' },
    'log-format': { type: 'string', default: 'pretty' },
    'sandbox-dir': { type: 'string' },
    'max-runs': { type: 'string' },
    demo: { type: 'boolean' },
  });
  if (v.help) return print(USAGE.serve);
  // Watched from the start: a parent that goes away while the data opens is seen all the same.
  const starterGone = parentGone();
  const host = String(v.host);
  if (!LOOPBACK.test(host))
    throw new UsageError(
      `--host must be a loopback address (127.0.0.1, ::1 or localhost), not ${host}`,
      'serve',
    );
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

  const snapshotAfter = process.env.SESSIONDESK_SNAPSHOT_AFTER_BYTES?.trim();
  const snapshotAfterBytes = snapshotAfter ? Number(snapshotAfter) : undefined;
  if (
    snapshotAfterBytes !== undefined &&
    !(Number.isInteger(snapshotAfterBytes) && snapshotAfterBytes >= 65536)
  ) {
    throw new CliError(
      `SESSIONDESK_SNAPSHOT_AFTER_BYTES must be a whole number of bytes, at least 65536, not "${snapshotAfter}"`,
    );
  }

  const logger = createEventLog({ level, format, stream: process.stderr, clock: systemClock });
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
  }).catch((err: unknown) => {
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
  // SIGHUP too: a closed terminal or a service manager's reload must not leave the directory locked.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  void starterGone.then((pid) => stop(`the process that started it (pid ${pid}) is gone`));
  // Like Jupyter's: the token in the URL is what lets this browser set up and open the demo.
  print(`Session Desk is running at ${server.launchUrl}`);
  print(`Data directory: ${dataDir}`);
  const repos = createRepositories(server.store.db);
  if (v.demo) {
    print(`Demo workspace (sample data): organizationId ${DEMO.organizationId}`);
    const signIn = readDemoSignIn(dataDir);
    if (signIn) print(`Demo sign-in: ${signIn.email} / ${signIn.password} (or open the URL above)`);
  }
  if (ownAccountCount(repos) === 0) {
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

async function userCreate(args: string[]): Promise<void> {
  const v = parse('user create', args, {
    email: { type: 'string' },
    name: { type: 'string' },
    password: { type: 'string' },
    'image-url': { type: 'string' },
  });
  if (v.help) return print(USAGE['user create']);
  required('user create', v, 'email', 'name', 'password');
  const input = validate('user create', CreateUserBodySchema, {
    email: v.email,
    name: v.name,
    password: v.password,
    ...(v['image-url'] === undefined ? {} : { imageUrl: v['image-url'] }),
  });
  await withTarget(v['data-dir'], async (target) => print((await target.createUser(input)).id));
}

async function workspaceCreate(args: string[]): Promise<void> {
  const v = parse('workspace create', args, { name: { type: 'string' }, owner: { type: 'string' } });
  if (v.help) return print(USAGE['workspace create']);
  required('workspace create', v, 'name', 'owner');
  const input = validate('workspace create', CreateWorkspaceBodySchema, {
    name: v.name,
    ownerEmail: v.owner,
  });
  await withTarget(v['data-dir'], async (target) =>
    print((await target.createWorkspace(input)).organizationId),
  );
}

async function memberAdd(args: string[]): Promise<void> {
  const v = parse('member add', args, { workspace: { type: 'string' }, email: { type: 'string' } });
  if (v.help) return print(USAGE['member add']);
  required('member add', v, 'workspace', 'email');
  const input = validate('member add', AddMemberBodySchema, { organizationId: v.workspace, email: v.email });
  await withTarget(v['data-dir'], async (target) => {
    const member = await target.addMember(input);
    print(`${member.email} is now a member of ${input.organizationId}`);
  });
}

async function memberRemove(args: string[]): Promise<void> {
  const v = parse('member remove', args, { workspace: { type: 'string' }, email: { type: 'string' } });
  if (v.help) return print(USAGE['member remove']);
  required('member remove', v, 'workspace', 'email');
  const input = validate('member remove', AddMemberBodySchema, {
    organizationId: v.workspace,
    email: v.email,
  });
  await withTarget(v['data-dir'], async (target) => {
    await target.removeMember(input);
    print(`${input.email.toLowerCase()} is no longer a member of ${input.organizationId}`);
  });
}

/**
 * A cell as it can be printed: control characters (names stored before they were refused, or
 * anything else a cell holds) are shown as `\u{1b}` and the like, never sent to the terminal.
 */
const printable = (cell: string) =>
  cell.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

/** Rows as aligned columns, the header first. */
function printTable(table: string[][]): void {
  const rows = table.map((row) => row.map(printable));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}

async function userList(args: string[]): Promise<void> {
  const v = parse('user list', args, { json: { type: 'boolean' } });
  if (v.help) return print(USAGE['user list']);
  await withTarget(v['data-dir'], async (target) => {
    const users = await target.listUsers();
    if (v.json) return print(JSON.stringify(users, null, 2));
    if (users.length === 0) return print('No users yet.');
    printTable([
      ['ID', 'EMAIL', 'NAME', 'WORKSPACES', 'CREATED'],
      ...users.map((u) => [u.id, u.email, u.name, String(u.workspaces), u.createdAt]),
    ]);
  });
}

async function workspaceList(args: string[]): Promise<void> {
  const v = parse('workspace list', args, { json: { type: 'boolean' } });
  if (v.help) return print(USAGE['workspace list']);
  await withTarget(v['data-dir'], async (target) => {
    const workspaces = await target.listWorkspaces();
    if (v.json) return print(JSON.stringify(workspaces, null, 2));
    if (workspaces.length === 0) return print('No workspaces yet.');
    printTable([
      ['ORGANIZATIONID', 'NAME', 'OWNERS', 'MEMBERS', 'SESSIONS', 'CREATED'],
      ...workspaces.map((w) => [
        w.organizationId,
        w.name,
        w.owners.join(', ') || '-',
        String(w.members),
        String(w.sessions),
        w.createdAt,
      ]),
    ]);
  });
}

async function keyCreate(args: string[]): Promise<void> {
  const v = parse('key create', args, { workspace: { type: 'string' }, name: { type: 'string' } });
  if (v.help) return print(USAGE['key create']);
  required('key create', v, 'workspace');
  const input = validate('key create', CreateKeyBodySchema, {
    organizationId: v.workspace,
    ...(v.name === undefined ? {} : { label: v.name }),
  });
  await withTarget(v['data-dir'], async (target) => print((await target.createKey(input)).key));
}

async function keyList(args: string[]): Promise<void> {
  const v = parse('key list', args, { workspace: { type: 'string' }, json: { type: 'boolean' } });
  if (v.help) return print(USAGE['key list']);
  required('key list', v, 'workspace');
  await withTarget(v['data-dir'], async (target) => {
    const keys = await target.listKeys(String(v.workspace));
    if (v.json) return print(JSON.stringify(keys, null, 2));
    if (keys.length === 0) return print('No active API keys.');
    printTable([
      ['ID', 'PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'CREATED BY'],
      ...keys.map((k) => [
        k.id,
        `${k.prefix}…`,
        k.label || '-',
        k.createdAt,
        k.lastUsedAt ?? 'never',
        k.createdBy?.name ?? '(command line)',
      ]),
    ]);
  });
}

async function keyRevoke(args: string[]): Promise<void> {
  const v = parse('key revoke', args, { workspace: { type: 'string' }, id: { type: 'string' } });
  if (v.help) return print(USAGE['key revoke']);
  required('key revoke', v, 'workspace', 'id');
  await withTarget(v['data-dir'], async (target) => {
    await target.revokeKey({ organizationId: String(v.workspace), keyId: String(v.id) });
    print(`Revoked ${String(v.id)}`);
  });
}

async function withDataTarget<T>(dataDirFlag: unknown, run: (target: DataTarget) => Promise<T>): Promise<T> {
  const dataDir = resolveDataDir(dataDirFlag as string | undefined);
  // Unlike the admin commands, these never make sense on a directory that is not there yet.
  if (!existsSync(dataDir)) {
    throw new CliError(
      `There is no data directory at ${dataDir}. Check --data-dir and SESSIONDESK_DATA_DIR.`,
    );
  }
  const target = await openDataTarget(dataDir, stderrLogger);
  try {
    return await run(target);
  } finally {
    await target.close();
  }
}

function readableFile(path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    throw new CliError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  if (!isFile) throw new CliError(`${path} is not a file`);
}

async function exportCommand(args: string[]): Promise<void> {
  const v = parse('export', args, {
    workspace: { type: 'string' },
    format: { type: 'string', default: 'ndjson' },
    output: { type: 'string' },
  });
  if (v.help) return print(USAGE.export);
  required('export', v, 'workspace');
  const format = String(v.format);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be ${EXPORT_FORMATS.join(' or ')}, not ${format}`, 'export');
  }
  const output = typeof v.output === 'string' ? resolve(v.output) : null;
  const bytes = await withDataTarget(v['data-dir'], async (target) => {
    // Made once the data directory is open: opening it removes stray *.tmp files in it.
    const out = output ? await fileSink(output) : stdoutSink();
    try {
      await target.exportWorkspace(String(v.workspace), format as ExportFormat, out);
      await out.commit();
    } catch (err) {
      await out.abort();
      throw err;
    }
    return out.bytes;
  });
  if (output) print(`Exported ${String(v.workspace)} to ${output} (${formatBytes(bytes)}).`);
}

async function importCommand(args: string[]): Promise<void> {
  const v = parse('import', args, { workspace: { type: 'string' }, input: { type: 'string' } });
  if (v.help) return print(USAGE.import);
  required('import', v, 'workspace');
  let input: Readable;
  if (typeof v.input === 'string') {
    const path = resolve(v.input);
    readableFile(path);
    input = createReadStream(path);
  } else {
    if (process.stdin.isTTY) {
      throw new UsageError('pass --input FILE, or pipe the export in on stdin', 'import');
    }
    input = process.stdin;
  }
  const report = await withDataTarget(v['data-dir'], (target) =>
    target.importSessions(String(v.workspace), input),
  );
  print(formatImportReport(report));
}

async function backupCommand(args: string[]): Promise<void> {
  const v = parse('backup', args, { output: { type: 'string' } });
  if (v.help) return print(USAGE.backup);
  required('backup', v, 'output');
  const output = resolve(String(v.output));
  const sink = await fileSink(output);
  let checked: CheckedBackup;
  try {
    checked = await withDataTarget(v['data-dir'], async (target) => {
      // Checked as it is written: the file appears under its name only if it would restore.
      const written = async function* () {
        for await (const chunk of target.backup()) {
          await sink.write(chunk);
          yield chunk;
        }
      };
      return checkBackupStream(written());
    });
    await sink.commit();
  } catch (err) {
    await sink.abort();
    if (err instanceof BackupCheckError || err instanceof TarError) {
      throw new CliError(
        `The copy is not a usable backup (${err.message}); nothing was written. Run "sessiondesk doctor".`,
      );
    }
    throw err;
  }
  print(
    `Backed up ${describeCounts(checked.facts.counts)} to ${output} (${formatBytes(sink.bytes)}: the database ` +
      `and ${checked.transcripts} transcripts; schema version ${checked.facts.schemaVersion}, integrity_check ok).`,
  );
}

async function restoreCommand(args: string[]): Promise<void> {
  const v = parse('restore', args, { input: { type: 'string' } });
  if (v.help) return print(USAGE.restore);
  required('restore', v, 'input');
  const input = resolve(String(v.input));
  readableFile(input);
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  const facts = await restoreBackup(input, dataDir, {
    clock: systemClock,
    logger: stderrLogger,
  });
  print(`Restored ${describeCounts(facts.counts)} from ${input} into ${dataDir}.`);
  print(`Start it with: sessiondesk serve --data-dir ${JSON.stringify(dataDir)}`);
}

async function doctorCommand(args: string[]): Promise<number> {
  const v = parse('doctor', args, { json: { type: 'boolean' }, repair: { type: 'boolean' } });
  if (v.help) {
    print(USAGE.doctor);
    return 0;
  }
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  // Only a directory that exists is repaired: opening one creates it.
  if (v.repair && existsSync(dataDir)) await repairDataDir(dataDir, stderrLogger);
  const report = await runDoctor(dataDir);
  print(v.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
  return report.problems.length > 0 ? 1 : 0;
}

async function historyImportCommand(args: string[]): Promise<void> {
  const v = parse('history import', args, {
    workspace: { type: 'string' },
    'claude-dir': { type: 'string' },
    'codex-dir': { type: 'string' },
    'gemini-dir': { type: 'string' },
    author: { type: 'string' },
  });
  if (v.help) return print(USAGE['history import']);
  required('history import', v, 'workspace');
  const flag = (name: string) => (typeof v[name] === 'string' ? String(v[name]) : undefined);
  const dirs: Partial<Record<'claude-code' | 'codex' | 'gemini', string>> = {};
  for (const [kind, name] of [
    ['claude-code', 'claude-dir'],
    ['codex', 'codex-dir'],
    ['gemini', 'gemini-dir'],
  ] as const) {
    const dir = flag(name);
    if (dir !== undefined) dirs[kind] = resolve(dir);
  }
  const author = flag('author');
  const body = validate('history import', HistoryImportBodySchema, {
    organizationId: v.workspace,
    sources: historySources(dirs),
    ...(author === undefined ? {} : { authorEmail: author }),
  });
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  for (const line of await historyImport(dataDir, body, stderrLogger)) print(line);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void | number>> = {
  serve,
  'user create': userCreate,
  'user list': userList,
  'workspace create': workspaceCreate,
  'workspace list': workspaceList,
  'member add': memberAdd,
  'member remove': memberRemove,
  'key create': keyCreate,
  'key list': keyList,
  'key revoke': keyRevoke,
  'agent-command set': agentCommandSet,
  'agent-command list': agentCommandList,
  'agent-command remove': agentCommandRemove,
  export: exportCommand,
  import: importCommand,
  'history import': historyImportCommand,
  backup: backupCommand,
  restore: restoreCommand,
  doctor: doctorCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  if (first === undefined) {
    process.stderr.write(`${USAGE.main}\n`);
    return 2;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    print(USAGE.main);
    return 0;
  }
  if (first === '--version' || first === '-V' || first === '-v' || first === 'version') {
    print(version());
    return 0;
  }
  // `sessiondesk key` or `sessiondesk key --help`: the group's commands.
  if (first in GROUPS && (second === undefined || second === '--help' || second === '-h')) {
    const text = GROUPS[first as keyof typeof GROUPS];
    if (second === undefined) {
      process.stderr.write(`sessiondesk: "${first}" needs a command\n\n${text}\n`);
      return 2;
    }
    print(text);
    return 0;
  }
  const two = `${first} ${second ?? ''}`;
  const [name, args] = COMMANDS[two] ? [two, rest] : COMMANDS[first] ? [first, argv.slice(1)] : [null, []];
  try {
    if (name === null) {
      const typed = [first, second].filter(Boolean).join(' ');
      const names = [...Object.keys(COMMANDS), ...Object.keys(GROUPS)];
      const meant = closest(typed, names) ?? closest(first, names);
      throw new UsageError(
        `unknown command "${typed}"${meant ? ` (did you mean "sessiondesk ${meant}"?)` : ''}`,
        'main' as CommandName,
      );
    }
    return (await (COMMANDS[name] as (a: string[]) => Promise<void | number>)(args)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`sessiondesk: ${err.message}\n\n${USAGE[err.command]}\n`);
      return 2;
    }
    if (
      err instanceof AppError ||
      err instanceof CliError ||
      err instanceof DataDirLockedError ||
      err instanceof DataDamagedError ||
      err instanceof PortInUseError ||
      err instanceof StoreUnavailableError ||
      err instanceof ImportInputError ||
      err instanceof RestoreRefusedError ||
      err instanceof NamedCommandsError ||
      err instanceof DataDirPermissionError ||
      err instanceof SandboxRootError
    ) {
      process.stderr.write(`sessiondesk: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(
      `sessiondesk: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}

// Output nobody reads any more (`sessiondesk serve | head -1`, a closed terminal: EPIPE, EIO)
// must not crash a running server, nor keep it from stopping cleanly when it says it stops.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'EIO') throw err;
  });
}

// Exit status 13 is Node's word for a promise nobody settled: never let it pass in silence.
process.on('exit', (status) => {
  if (status === 13) {
    process.stderr.write(
      'sessiondesk: internal error: the command stopped while waiting on work that never finished (exit 13)\n',
    );
  }
});

const code = await main(process.argv.slice(2));
// `serve` keeps running until a signal; everything else ends here.
if (code !== 0 || !['serve'].includes(process.argv[2] ?? '') || process.argv.includes('--help')) {
  process.exitCode = code;
}
