import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AGENT_COMMAND_NAME_PATTERN } from '../../../../src-shared/accounts.js';
import { realFiles, writeFileAtomically } from '../../../store/file-layer.js';

/**
 * The agent commands the administrator defined (`sessiondesk agent-command set`), by name.
 * Running a program of one's choice is an installation-level privilege: workspace owners
 * pick among these names and never send a program themselves. The file lives in the data
 * directory (which agents never see) and is read afresh at each use, so a change made by
 * the CLI applies to the next run of a running server. The ACP agents the administrator adds
 * (`sessiondesk acp-agent set`) are kept the same way, in a file of their own.
 */
export const NAMED_COMMANDS_FILE = 'agent-commands.json';

const FileSchema = z.object({
  version: z.literal(1),
  commands: z.record(
    z.string().regex(AGENT_COMMAND_NAME_PATTERN),
    z.array(z.string().min(1).max(1000)).min(1).max(50),
  ),
});

export class NamedCommandsError extends Error {}

export function readNamedCommands(dataDir: string, file = NAMED_COMMANDS_FILE): Record<string, string[]> {
  const path = join(dataDir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new NamedCommandsError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new NamedCommandsError(`${path} is not JSON; fix it or remove it and define the commands again.`);
  }
  const result = FileSchema.safeParse(parsed);
  if (!result.success) {
    throw new NamedCommandsError(
      `${path} is not a list of agent commands (${result.error.issues[0]?.message ?? 'invalid'}).`,
    );
  }
  return result.data.commands;
}

/** Written whole (temp file, fsync, rename), readable only by this user. */
export async function writeNamedCommands(
  dataDir: string,
  commands: Record<string, string[]>,
  file = NAMED_COMMANDS_FILE,
): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(commands).sort(([a], [b]) => a.localeCompare(b)));
  await writeFileAtomically(
    realFiles,
    join(dataDir, file),
    Buffer.from(`${JSON.stringify({ version: 1, commands: sorted }, null, 2)}\n`),
  );
}
