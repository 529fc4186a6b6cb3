import { AGENT_COMMAND_NAME_PATTERN } from '../../src-shared/accounts.js';
import { acpAgent, ADMIN_ACP_AGENTS_FILE } from '../agents/kinds/acp/acp-agents.js';
import {
  NAMED_COMMANDS_FILE,
  readNamedCommands,
  writeNamedCommands,
} from '../agents/kinds/command/named-commands.js';
import { resolveDataDir } from '../paths.js';
import { CliError, existingDataDir } from './admin-target.js';
import { parse, parseWithOperands, print } from './command-line.js';
import { refuseTeamDatabase } from './team-database.js';
import { UsageError, type Command } from './usage.js';

/**
 * `sessiondesk agent-command …`: the administrator (whoever runs the CLI as the data
 * directory's owner) defines the programs workspaces may run. Owners then choose one by
 * name in the dashboard; nobody chooses a program over HTTP. The ACP agents they add
 * (`sessiondesk acp-agent …`) are kept the same way.
 */

function checkName(name: string | undefined, command: Command): string {
  if (name === undefined) throw new UsageError('missing NAME', command);
  if (!AGENT_COMMAND_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `NAME must be 1 to 40 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit, not ${JSON.stringify(name)}`,
      command,
    );
  }
  return name;
}

/**
 * The data directory the programs are kept in. A team database is refused, not passed over for
 * the local directory: each server process reads them from its own `--data-dir`.
 */
function dataDirOf(command: Command, values: { 'data-dir'?: unknown; database?: unknown }): string {
  refuseTeamDatabase(
    command,
    values.database,
    () =>
      `${command.split(' ')[0]!} keeps its programs in a data directory, not in a team server's database, and nothing was changed. ` +
      'Each "serve --database" process reads them from its own --data-dir (a program is a path on its machine): ' +
      `run "sessiondesk ${command} … --data-dir DIR" with the --data-dir of each process, and leave out --database.`,
  );
  return existingDataDir(resolveDataDir(values['data-dir'] as string | undefined));
}

/** What the administrator keeps by name: the agent commands, or the ACP agents they add. */
interface NamedPrograms {
  command: 'agent-command' | 'acp-agent';
  file: string;
  /** "the agent command", "the ACP agent" */
  what: string;
  noneDefined: string;
  removed: (name: string) => string;
  /** Changes to `name` beyond the program (an ACP agent of Session Desk's own keeps its home). */
  note?: (name: string, existed: boolean) => string;
}

const AGENT_COMMANDS: NamedPrograms = {
  command: 'agent-command',
  file: NAMED_COMMANDS_FILE,
  what: 'the agent command',
  noneDefined: 'No agent commands defined.',
  removed: (name) =>
    `Removed the agent command ${name}; workspaces that chose it fail their next run until they choose another.`,
};

const ACP_AGENTS_OF_ADMIN: NamedPrograms = {
  command: 'acp-agent',
  file: ADMIN_ACP_AGENTS_FILE,
  what: 'the ACP agent',
  noneDefined: 'No ACP agents added.',
  removed: (name) =>
    acpAgent(name)
      ? `Removed your launch command for the ACP agent ${name}; it starts as Session Desk knows it again.`
      : `Removed the ACP agent ${name}; workspaces that chose it fail their next run until they choose another.`,
  note: (name) =>
    acpAgent(name)
      ? ` (it replaces how Session Desk starts ${name}; its home in the session stays as it was)`
      : '',
};

function namedSet(kind: NamedPrograms) {
  const set = `${kind.command} set` as const;
  return async (args: string[]): Promise<void> => {
    const split = args.indexOf('--');
    const own = split === -1 ? args : args.slice(0, split);
    const program = split === -1 ? [] : args.slice(split + 1);
    const { values, positionals } = parseWithOperands(set, own);
    if (positionals.length > 1) throw new UsageError('put the program after "--"', set);
    const name = checkName(positionals[0], set);
    if (program.length === 0 || program.some((a) => a === '')) {
      throw new UsageError('give the program and its arguments after "--"', set);
    }
    if (program.length > 50 || program.some((a) => a.length > 1000)) {
      throw new UsageError('a command has at most 50 arguments of at most 1000 characters', set);
    }
    const dataDir = dataDirOf(set, values);
    const commands = readNamedCommands(dataDir, kind.file);
    const existed = name in commands;
    commands[name] = program;
    await writeNamedCommands(dataDir, commands, kind.file);
    print(
      `${existed ? 'Changed' : 'Defined'} ${kind.what} ${name}: ${JSON.stringify(program)}${kind.note?.(name, existed) ?? ''}`,
    );
  };
}

function namedList(kind: NamedPrograms) {
  const list = `${kind.command} list` as const;
  return async (args: string[]): Promise<void> => {
    const values = parse(list, args);
    const commands = readNamedCommands(dataDirOf(list, values), kind.file);
    if (values.json) return print(JSON.stringify(commands, null, 2));
    const names = Object.keys(commands);
    if (names.length === 0) return print(kind.noneDefined);
    for (const name of names) print(`${name}  ${JSON.stringify(commands[name])}`);
  };
}

function namedRemove(kind: NamedPrograms, verb: 'remove' | 'unset') {
  const remove = `${kind.command} ${verb}` as Command;
  return async (args: string[]): Promise<void> => {
    const { values, positionals } = parseWithOperands(remove, args);
    const name = checkName(positionals[0], remove);
    const dataDir = dataDirOf(remove, values);
    const commands = readNamedCommands(dataDir, kind.file);
    if (!(name in commands))
      throw new CliError(`There is no ${kind.what.replace(/^the /u, '')} named ${name}.`);
    delete commands[name];
    await writeNamedCommands(dataDir, commands, kind.file);
    print(kind.removed(name));
  };
}

export const agentCommandSet = namedSet(AGENT_COMMANDS);
export const agentCommandList = namedList(AGENT_COMMANDS);
export const agentCommandRemove = namedRemove(AGENT_COMMANDS, 'remove');

/** `sessiondesk acp-agent …`: the administrator adds an ACP agent, or changes how one starts. */
export const acpAgentSet = namedSet(ACP_AGENTS_OF_ADMIN);
export const acpAgentList = namedList(ACP_AGENTS_OF_ADMIN);
export const acpAgentUnset = namedRemove(ACP_AGENTS_OF_ADMIN, 'unset');
