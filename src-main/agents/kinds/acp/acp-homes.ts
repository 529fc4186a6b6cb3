import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  ownFolders,
  parseJsonObject,
  pick,
  readRegularFile,
  replaceFile,
  syncFile,
} from '../cli/home-files.js';

/**
 * The homes of the ACP agents that are not one of the native CLIs: each keeps its state in a
 * folder of the session's home, seeded before every run with the person's sign-in and model
 * choice from their own folders (which no run can write), as the native kinds' homes are. The
 * rest of the person's settings (MCP servers, plugins, hooks, permissions) stays theirs.
 */

/** Seeds an agent's folder in a session's home; returns the variables that point it there. */
export type AcpHomeSeed = (
  folder: string,
  home: string,
  env: NodeJS.ProcessEnv,
  notes: string[],
) => Promise<Record<string, string>>;

const personHome = (env: NodeJS.ProcessEnv) => env.HOME ?? homedir();

/** The person's config as JSON, or a note saying why it is left out. */
async function personJson(path: string, notes: string[], agent: string): Promise<Record<string, unknown>> {
  const text = await readRegularFile(path);
  if (text === null) return {};
  const parsed = parseJsonObject(text);
  if (parsed === null) {
    notes.push(
      `${agent}'s configuration ${path} could not be read as JSON; this run uses ${agent}'s defaults.`,
    );
    return {};
  }
  return parsed;
}

/** OpenCode's configuration that chooses its model and provider (their keys and endpoints). */
const OPENCODE_MODEL_KEYS = ['model', 'small_model', 'provider', 'enabled_providers', 'disabled_providers'];

/**
 * OpenCode keeps its configuration in `$XDG_CONFIG_HOME/opencode/opencode.json` and its
 * sign-ins in `$XDG_DATA_HOME/opencode/auth.json`: the session gets both, the configuration cut
 * to the model and providers, and its own XDG folders for the rest (its database, snapshots).
 */
export const seedOpenCode: AcpHomeSeed = async (folder, home, env, notes) => {
  const theirConfig = join(env.XDG_CONFIG_HOME ?? join(personHome(env), '.config'), 'opencode');
  const theirData = join(env.XDG_DATA_HOME ?? join(personHome(env), '.local', 'share'), 'opencode');
  const xdg = {
    XDG_CONFIG_HOME: join(folder, 'config'),
    XDG_DATA_HOME: join(folder, 'data'),
    XDG_STATE_HOME: join(folder, 'state'),
    XDG_CACHE_HOME: join(folder, 'cache'),
  };
  const config = join(xdg.XDG_CONFIG_HOME, 'opencode');
  const data = join(xdg.XDG_DATA_HOME, 'opencode');
  await ownFolders(home, config);
  await ownFolders(home, data);
  await syncFile(join(theirData, 'auth.json'), data, 'auth.json');
  const theirs = await personJson(join(theirConfig, 'opencode.json'), notes, 'OpenCode');
  await replaceFile(
    config,
    'opencode.json',
    JSON.stringify({ ...pick(theirs, OPENCODE_MODEL_KEYS), autoupdate: false, share: 'disabled' }),
  );
  return { ...xdg, ...OPENCODE_OFFLINE_ENV };
};

/** What keeps OpenCode from fetching and sharing on its own: updates, shares, plugins, model lists. */
export const OPENCODE_OFFLINE_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
};

/** Qwen Code's settings that sign it in and choose its model. */
const QWEN_MODEL_KEYS = ['model', 'modelProviders'];

/**
 * Qwen Code keeps everything in `$QWEN_HOME` (`~/.qwen`): the session's gets the person's
 * sign-in (`oauth_creds.json`, the `.env` of their keys) and, of their settings, how they sign
 * in and which model they use. Its shell tool runs commands as plain child processes: under ACP
 * it would give each a terminal (node-pty), whose closing at times hangs up a command that had
 * already exited 0, and Qwen Code then reports it as failed ("Signal: 1"); nobody types into
 * that terminal here.
 */
export const seedQwenCode: AcpHomeSeed = async (folder, home, env, notes) => {
  const theirs = env.QWEN_HOME ?? join(personHome(env), '.qwen');
  await ownFolders(home, folder);
  for (const name of ['oauth_creds.json', '.env']) await syncFile(join(theirs, name), folder, name);
  const settings = await personJson(join(theirs, 'settings.json'), notes, 'Qwen Code');
  const auth = (settings.security as Record<string, unknown> | undefined)?.auth;
  const ours: Record<string, unknown> = pick(settings, QWEN_MODEL_KEYS);
  if (typeof auth === 'object' && auth !== null)
    ours.security = { auth: pick(auth as Record<string, unknown>, ['selectedType', 'enforcedType']) };
  ours.tools = { shell: { enableInteractiveShell: false } };
  await replaceFile(folder, 'settings.json', JSON.stringify(ours));
  return { QWEN_HOME: folder };
};
