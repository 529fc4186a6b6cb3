import { parseArgs } from 'node:util';
import { AGENT_COMMAND_NAME_PATTERN } from '../../src-shared/accounts.js';
import { readNamedCommands, writeNamedCommands } from '../agents/kinds/command/named-commands.js';
import { resolveDataDir } from '../paths.js';
import { CliError, existingDataDir } from './admin-target.js';
import { print } from './command-line.js';
import { USAGE, UsageError, type CommandName } from './usage.js';

/**
 * `sessiondesk agent-command …`: the administrator (whoever runs the CLI as the data
 * directory's owner) defines the programs workspaces may run. Owners then choose one by
 * name in the dashboard; nobody chooses a program over HTTP.
 */

function parse(command: CommandName, args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), command);
  }
}

function checkName(name: string | undefined, command: CommandName): string {
  if (name === undefined) throw new UsageError('missing NAME', command);
  if (!AGENT_COMMAND_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `NAME must be 1 to 40 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit, not ${JSON.stringify(name)}`,
      command,
    );
  }
  return name;
}

function dataDirOf(flag: unknown): string {
  return existingDataDir(resolveDataDir(flag as string | undefined));
}

export async function agentCommandSet(args: string[]): Promise<void> {
  const split = args.indexOf('--');
  const own = split === -1 ? args : args.slice(0, split);
  const program = split === -1 ? [] : args.slice(split + 1);
  const { values, positionals } = parse('agent-command set', own);
  if (values.help) return print(USAGE['agent-command set']);
  if (positionals.length > 1) throw new UsageError('put the program after "--"', 'agent-command set');
  const name = checkName(positionals[0], 'agent-command set');
  if (program.length === 0 || program.some((a) => a === '')) {
    throw new UsageError('give the program and its arguments after "--"', 'agent-command set');
  }
  if (program.length > 50 || program.some((a) => a.length > 1000)) {
    throw new UsageError(
      'a command has at most 50 arguments of at most 1000 characters',
      'agent-command set',
    );
  }
  const dataDir = dataDirOf(values['data-dir']);
  const commands = readNamedCommands(dataDir);
  const existed = name in commands;
  commands[name] = program;
  await writeNamedCommands(dataDir, commands);
  print(`${existed ? 'Changed' : 'Defined'} the agent command ${name}: ${JSON.stringify(program)}`);
}

export async function agentCommandList(args: string[]): Promise<void> {
  const { values, positionals } = parse('agent-command list', args);
  if (values.help) return print(USAGE['agent-command list']);
  if (positionals.length > 0) throw new UsageError(`unexpected ${positionals[0]}`, 'agent-command list');
  const commands = readNamedCommands(dataDirOf(values['data-dir']));
  if (values.json) return print(JSON.stringify(commands, null, 2));
  const names = Object.keys(commands);
  if (names.length === 0) return print('No agent commands defined.');
  for (const name of names) print(`${name}  ${JSON.stringify(commands[name])}`);
}

export async function agentCommandRemove(args: string[]): Promise<void> {
  const { values, positionals } = parse('agent-command remove', args);
  if (values.help) return print(USAGE['agent-command remove']);
  const name = checkName(positionals[0], 'agent-command remove');
  const dataDir = dataDirOf(values['data-dir']);
  const commands = readNamedCommands(dataDir);
  if (!(name in commands)) throw new CliError(`There is no agent command named ${name}.`);
  delete commands[name];
  await writeNamedCommands(dataDir, commands);
  print(
    `Removed the agent command ${name}; workspaces that chose it fail their next run until they choose another.`,
  );
}
