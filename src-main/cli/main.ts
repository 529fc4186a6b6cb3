import { AppError } from '../errors.js';
import { DataDamagedError, StoreUnavailableError } from '../store/store.js';
import { DataDirLockedError } from '../store/lock.js';
import { ImportInputError } from '../data/import.js';
import { RestoreRefusedError } from '../data/restore.js';
import { PortInUseError } from '../server/start.js';
import { NamedCommandsError } from '../agents/kinds/command/named-commands.js';
import { DataDirPermissionError } from '../data-dir-permissions.js';
import { SandboxRootError } from '../agents/sandbox/sandbox-root.js';
import { CliError } from './admin-target.js';
import {
  keyCreate,
  keyList,
  keyRevoke,
  memberAdd,
  memberRemove,
  userCreate,
  userList,
  userSetPassword,
  workspaceCreate,
  workspaceList,
} from './admin-commands.js';
import {
  acpAgentList,
  acpAgentSet,
  acpAgentUnset,
  agentCommandList,
  agentCommandRemove,
  agentCommandSet,
} from './agent-commands.js';
import { agentCheckCommand } from './agent-check-command.js';
import { print, version } from './command-line.js';
import {
  backupCommand,
  doctorCommand,
  exportCommand,
  importCommand,
  restoreCommand,
} from './data-commands.js';
import { historyImportCommand } from './history-command.js';
import { pushCommand } from './push-command.js';
import { serve } from './serve-command.js';
import { GROUPS, HelpAsked, USAGE, UsageError, type Command } from './usage.js';
import { closest } from './did-you-mean.js';

/**
 * The `sessiondesk` command's entry: which command the arguments name (or the help, the version,
 * a group's commands), and how each failure becomes its message and exit code (0 done, 1 failed,
 * 2 misused, with the usage). The commands themselves live in the *-command(s).ts files beside it.
 */

const COMMANDS: Record<Command, (args: string[]) => Promise<void | number>> = {
  serve,
  'user create': userCreate,
  'user list': userList,
  'user set-password': userSetPassword,
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
  'agent check': agentCheckCommand,
  'acp-agent set': acpAgentSet,
  'acp-agent list': acpAgentList,
  'acp-agent unset': acpAgentUnset,
  export: exportCommand,
  import: importCommand,
  'history import': historyImportCommand,
  push: pushCommand,
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
  const text = Object.hasOwn(GROUPS, first) ? GROUPS[first] : undefined;
  if (text !== undefined && (second === undefined || second === '--help' || second === '-h')) {
    if (second === undefined) {
      process.stderr.write(`sessiondesk: "${first}" needs a command\n\n${text}\n`);
      return 2;
    }
    print(text);
    return 0;
  }
  const two = `${first} ${second ?? ''}`;
  const known = (name: string): name is Command => Object.hasOwn(COMMANDS, name);
  const [name, args] = known(two) ? [two, rest] : known(first) ? [first, argv.slice(1)] : [null, []];
  try {
    if (name === null) {
      const typed = [first, second].filter(Boolean).join(' ');
      const names = [...Object.keys(COMMANDS), ...Object.keys(GROUPS)];
      const meant = closest(typed, names) ?? closest(first, names);
      throw new UsageError(
        `unknown command "${typed}"${meant ? ` (did you mean "sessiondesk ${meant}"?)` : ''}`,
        'main',
      );
    }
    return (await COMMANDS[name](args)) ?? 0;
  } catch (err) {
    if (err instanceof HelpAsked) {
      print(USAGE[err.command]);
      return 0;
    }
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
