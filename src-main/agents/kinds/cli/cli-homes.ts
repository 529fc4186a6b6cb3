import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { defaultRoot } from '../../../history/importer.js';
import type { CliKind } from '../cli-kind-names.js';
import { names } from './conversation-files.js';
import {
  ownFolder,
  ownFolders,
  parseJsonObject,
  pick,
  readRegularFile,
  removeEntry,
  replaceFile,
  syncFile,
} from './home-files.js';

/**
 * Each session's agent CLIs keep their state in a home of the session's own, never in the
 * person's `~/.claude`, `~/.codex` or `~/.gemini`. What a run writes there (hooks, MCP servers,
 * notify commands, settings) therefore never reaches the person's own use of the CLI in a
 * terminal, nor another session, and no run sees another session's conversations.
 *
 * The home is seeded before every run with the person's credentials (and, for Codex, the model
 * provider it is configured with), read from the person's own folders, which no run can write.
 * The files that can make a CLI run a command (its settings and configuration) are written
 * afresh each time: what a run left in them does not carry over to the next run either.
 */

/** The folder beside the sessions' sandboxes that holds their CLI homes. */
export const CLI_HOMES_FOLDER = '.cli-homes';

/** A session's CLI home: hidden with the sandboxes root, bound into the session's own runs. */
export function cliHomePath(sandboxRoot: string, sessionId: string): string {
  return join(sandboxRoot, CLI_HOMES_FOLDER, sessionId);
}

/** The variables that point each CLI at its folder in a session's home. */
export function cliHomeEnv(home: string): Record<string, string> {
  return {
    CLAUDE_CONFIG_DIR: join(home, 'claude'),
    CODEX_HOME: join(home, 'codex'),
    // Gemini CLI takes it for the home folder, and keeps its state in `.gemini` there.
    GEMINI_CLI_HOME: join(home, 'gemini'),
  };
}

/** Where a kind keeps its state inside a session's home. */
export function sessionCliFolder(kind: CliKind, home: string): string {
  if (kind === 'claude-code') return join(home, 'claude');
  if (kind === 'codex') return join(home, 'codex');
  return join(home, 'gemini', '.gemini');
}

/** The person's own folder of a kind, as their CLI in a terminal uses it. */
export function personCliFolder(kind: CliKind, env: NodeJS.ProcessEnv): string {
  return defaultRoot(kind, env, env.HOME ?? homedir());
}

/** Claude Code's `.claude.json` keeps every project's history too: it grows to megabytes. */
const GLOBAL_CONFIG_MAX = 16 * 1024 * 1024;

/** Claude Code's global settings that sign it in: the rest (projects, MCP servers) stays the person's. */
const CLAUDE_SIGN_IN_KEYS = ['primaryApiKey', 'oauthAccount', 'customApiKeyResponses'] as const;

/** Codex's configuration that chooses its model and provider: no MCP servers, notify or profiles. */
const CODEX_MODEL_KEYS = [
  'model',
  'model_provider',
  'model_providers',
  'model_reasoning_effort',
  'model_reasoning_summary',
  'model_verbosity',
  'preferred_auth_method',
  'forced_login_method',
  'chatgpt_base_url',
] as const;

async function seedClaudeCode(home: string, env: NodeJS.ProcessEnv): Promise<void> {
  const person = personCliFolder('claude-code', env);
  const dir = sessionCliFolder('claude-code', home);
  await ownFolders(home, dir);
  await syncFile(join(person, '.credentials.json'), dir, '.credentials.json');
  // Hooks and MCP servers are settings: a run starts with none of its own making.
  for (const name of ['settings.json', 'settings.local.json']) await removeEntry(join(dir, name));
  const globalFile = env.CLAUDE_CONFIG_DIR
    ? join(env.CLAUDE_CONFIG_DIR, '.claude.json')
    : join(env.HOME ?? homedir(), '.claude.json');
  const theirs = parseJsonObject(await readRegularFile(globalFile, GLOBAL_CONFIG_MAX));
  const ours = parseJsonObject(await readRegularFile(join(dir, '.claude.json'), GLOBAL_CONFIG_MAX)) ?? {};
  for (const key of CLAUDE_SIGN_IN_KEYS) delete ours[key];
  delete ours.mcpServers;
  await replaceFile(
    dir,
    '.claude.json',
    JSON.stringify({ ...ours, hasCompletedOnboarding: true, ...pick(theirs ?? {}, CLAUDE_SIGN_IN_KEYS) }),
  );
}

async function seedCodex(home: string, env: NodeJS.ProcessEnv, notes: string[]): Promise<void> {
  const person = personCliFolder('codex', env);
  const dir = sessionCliFolder('codex', home);
  await ownFolders(home, dir);
  await syncFile(join(person, 'auth.json'), dir, 'auth.json');
  const text = await readRegularFile(join(person, 'config.toml'));
  let config: Record<string, unknown> = {};
  if (text !== null) {
    try {
      config = pick(parseToml(text), CODEX_MODEL_KEYS);
    } catch (err) {
      notes.push(
        `Codex's configuration ${join(person, 'config.toml')} could not be read (${(err as Error).message}); ` +
          'this run uses Codex with its default model and provider.',
      );
    }
  }
  await replaceFile(dir, 'config.toml', stringifyToml(config));
}

async function seedGemini(home: string, env: NodeJS.ProcessEnv): Promise<void> {
  const person = personCliFolder('gemini', env);
  const dir = sessionCliFolder('gemini', home);
  await ownFolders(home, dir);
  for (const name of ['oauth_creds.json', 'google_accounts.json'])
    await syncFile(join(person, name), dir, name);
  // How the person signs in, and nothing else of their settings (no MCP servers, hooks, tools).
  const theirs = parseJsonObject(await readRegularFile(join(person, 'settings.json'))) ?? {};
  const auth = (theirs.security as Record<string, unknown> | undefined)?.auth;
  const settings: Record<string, unknown> = {};
  if (typeof auth === 'object' && auth !== null)
    settings.security = { auth: pick(auth as Record<string, unknown>, ['selectedType', 'enforcedType']) };
  if (typeof theirs.selectedAuthType === 'string') settings.selectedAuthType = theirs.selectedAuthType;
  await replaceFile(dir, 'settings.json', JSON.stringify(settings));
}

/**
 * Makes a session's CLI home ready for a run of `kinds` (the command agent may run any of
 * them) and returns the variables that point the CLIs at it. `env` is the agents' environment,
 * whose HOME (and CLAUDE_CONFIG_DIR, CODEX_HOME) locate the person's own folders.
 */
export async function prepareCliHome(
  home: string,
  kinds: readonly CliKind[],
  env: NodeJS.ProcessEnv,
): Promise<{ env: Record<string, string>; notes: string[] }> {
  await mkdir(dirname(home), { recursive: true, mode: 0o700 });
  await ownFolder(home);
  const notes: string[] = [];
  for (const kind of kinds) {
    if (kind === 'claude-code') await seedClaudeCode(home, env);
    else if (kind === 'codex') await seedCodex(home, env, notes);
    else await seedGemini(home, env);
  }
  return { env: cliHomeEnv(home), notes };
}

/** Copies a file of the person's to a new name in a folder of the session's, then into place. */
async function copyInto(from: string, dir: string, name: string): Promise<void> {
  const stats = await lstat(from);
  if (!stats.isFile()) throw new Error(`${from} is not a regular file`);
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  await copyFile(from, temp, constants.COPYFILE_EXCL);
  await rename(temp, join(dir, name));
}

async function isFile(path: string): Promise<boolean> {
  return lstat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

const isFolder = (path: string) =>
  lstat(path).then(
    (stats) => stats.isDirectory(),
    () => false,
  );

/** The name Gemini CLI gives a project folder (its registry's own rule), with our prefix. */
function geminiSlugOf(folder: string): string {
  const slug = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9]/gu, '-')
    .replace(/-+/gu, '-')
    .replace(/^-|-$/gu, '');
  return `sessiondesk-${slug || 'project'}`;
}

/**
 * Gemini CLI resumes only the chats of the project of the folder it runs in, found by the
 * `.project_root` marker of a folder under `<root>/tmp`. The project of `workdir` in the
 * session's Gemini folder, made if there is none: its `chats` folder.
 */
async function geminiChats(home: string, root: string, workdir: string): Promise<string> {
  const tmp = join(root, 'tmp');
  await ownFolders(home, tmp);
  for (const name of await names(tmp)) {
    const project = join(tmp, name);
    if (!(await isFolder(project))) continue;
    const marker = await readRegularFile(join(project, '.project_root'));
    if (marker !== null && resolve(marker.trim()) === resolve(workdir)) {
      await ownFolder(join(project, 'chats'));
      return join(project, 'chats');
    }
  }
  const base = geminiSlugOf(workdir);
  for (let n = 0; ; n += 1) {
    const project = join(tmp, n === 0 ? base : `${base}-${n}`);
    try {
      await mkdir(project, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    await writeFile(join(project, '.project_root'), resolve(workdir), { flag: 'wx', mode: 0o600 });
    await mkdir(join(project, 'chats'), { mode: 0o700 });
    return join(project, 'chats');
  }
}

/**
 * Where a conversation's file goes in the session's home, for a run in `workdir`: Claude Code
 * resumes a conversation from the project folder of the folder it runs in
 * (`projects/<the folder, its other characters as '-'>/<id>.jsonl`); Codex finds it by its id
 * under `sessions/YYYY/MM/DD/`, kept as it was; Gemini CLI in the chats of the project of the
 * folder it runs in. The folders on the way are made folders of their own.
 */
async function conversationTarget(
  kind: CliKind,
  home: string,
  file: string,
  workdir: string,
): Promise<string> {
  const dir = sessionCliFolder(kind, home);
  if (kind === 'gemini') return join(await geminiChats(home, dir, workdir), basename(file));
  const target =
    kind === 'claude-code'
      ? join(dir, 'projects', resolve(workdir).replace(/[^a-zA-Z0-9]/gu, '-'))
      : join(dir, 'sessions', ...dirname(file).split(sep).slice(-3));
  await ownFolders(home, target);
  return join(target, basename(file));
}

/** A conversation file of the person's, to bind into a run's sandbox at `to` in the session's home. */
export interface BoundFile {
  from: string;
  to: string;
}

/**
 * An imported session's conversation, resumed from the session's home: its own file, the one
 * file of the person's CLI folder a run reaches, is bound in where the CLI looks for it (in the
 * operating-system sandbox), so that the CLI appends to it and the person's terminal goes on
 * with what the run did. Where runs have no sandbox a link stands there instead.
 */
export async function bindConversation(
  kind: CliKind,
  home: string,
  file: string,
  workdir: string,
  sandboxed: boolean,
): Promise<BoundFile | undefined> {
  // Only a regular file is bound: a link there could name any file of the person's.
  const stats = await lstat(file);
  if (!stats.isFile())
    throw new Error(`The conversation's file ${file} is not a regular file; it is not resumed.`);
  const to = await conversationTarget(kind, home, file, workdir);
  await rm(to, { force: true, recursive: true });
  if (!sandboxed) {
    await symlink(file, to);
    return undefined;
  }
  await writeFile(to, '', { flag: 'wx', mode: 0o600 });
  return { from: file, to };
}

/**
 * A conversation that a run of an earlier version kept in the person's own folder is copied
 * into the session's home, where the CLI resumes it and appends to the copy.
 */
export async function copyConversation(
  kind: CliKind,
  home: string,
  file: string,
  workdir: string,
): Promise<void> {
  const to = await conversationTarget(kind, home, file, workdir);
  if (await isFile(to)) return;
  await rm(to, { force: true, recursive: true });
  await copyInto(file, dirname(to), basename(to));
}
