import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { Logger } from '../clock.js';
import { PROJECT_ROOT } from '../paths.js';
import { closest } from './did-you-mean.js';
import { COMMAND_OPTIONS, COMMON_OPTIONS, TAKES_OPERANDS, type Options } from './command-options.js';
import { HelpAsked, UsageError, type Command, type CommandName } from './usage.js';

/**
 * What every command shares, so that all of them read options and speak alike: options parsed
 * and checked the same way (an unknown one named with its likely meaning, missing ones listed,
 * values checked by the server's own schemas), lines on stdout, messages on stderr.
 */

export const stderrLogger: Logger = {
  info: (msg) => process.stderr.write(`sessiondesk: ${msg}\n`),
  warn: (msg) => process.stderr.write(`sessiondesk: warning: ${msg}\n`),
  error: (msg) => process.stderr.write(`sessiondesk: error: ${msg}\n`),
};

/**
 * A command's options, read with the one table of what it takes (command-options.ts): an unknown
 * one is named with its likely meaning; `--help` prints the command's help and does nothing else.
 */
export function parse(command: Command, args: string[]) {
  return parseWithOperands(command, args).values;
}

/** `parse`, for a command that takes operands (a NAME) besides its options. */
export function parseWithOperands(command: Command, args: string[]) {
  const all: Options = { ...COMMON_OPTIONS, ...COMMAND_OPTIONS[command] };
  let parsed;
  try {
    parsed = parseArgs({ args, options: all, strict: true, allowPositionals: TAKES_OPERANDS.has(command) });
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
  if (parsed.values.help === true) throw new HelpAsked(command);
  return parsed;
}

export function required(command: CommandName, values: Record<string, unknown>, ...names: string[]): void {
  const missing = names.filter((n) => typeof values[n] !== 'string');
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((n) => `--${n}`).join(', ')}`, command);
}

/** Validates option values with the same schemas the server uses. */
export function validate<S extends z.ZodType>(command: CommandName, schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || 'value'} ${i.message}`);
    throw new UsageError(problems.join('; '), command);
  }
  return result.data;
}

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function version(): string {
  try {
    return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}
