import { join } from 'node:path';
import { readRegularFile } from '../cli/home-files.js';
import {
  objectAt,
  opencodeModel,
  personFolders,
  readDotEnv,
  readJson,
  readToml,
  shownPath,
  stringAt,
  type AgentFamily,
  type NeedsEnv,
} from './person-config.js';

/**
 * What signs an agent in, as its session's home and environment will hold it: the variables the
 * agents' environment passes on, and the files of the person's that the home is seeded with.
 */
export interface SignIn {
  /** Each credential found, where it is: "ANTHROPIC_API_KEY (environment)", "~/.codex/auth.json". */
  found: string[];
  /** What to add when none is found. */
  fix: string;
  /** Variables set in the server's environment that runs do not see (not in the allow-list). */
  hidden: string[];
}

/** How each family is signed in, when nothing is: the file a terminal sign-in writes, or a key. */
const FIXES: Record<AgentFamily, string> = {
  'claude-code':
    'Set ANTHROPIC_API_KEY in the environment Session Desk starts with, or sign in with `claude` in a terminal (it keeps the sign-in in ~/.claude/.credentials.json).',
  codex:
    'Sign in with `codex login` in a terminal (it writes ~/.codex/auth.json), or set OPENAI_API_KEY in the environment Session Desk starts with.',
  gemini:
    'Set GEMINI_API_KEY in the environment Session Desk starts with, or sign in with `gemini` in a terminal (it keeps the sign-in in ~/.gemini/oauth_creds.json).',
  opencode:
    "Sign in with `opencode auth login` in a terminal (it writes ~/.local/share/opencode/auth.json), or give the provider's key: its apiKey in ~/.config/opencode/opencode.json, or ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment Session Desk starts with.",
  'qwen-code':
    'Sign in with `qwen` in a terminal (it writes ~/.qwen/oauth_creds.json), or put OPENAI_API_KEY (with OPENAI_BASE_URL) in ~/.qwen/.env.',
};

/** The variables OpenCode reads a provider's key from, for the providers it knows. */
const OPENCODE_PROVIDER_KEYS: Record<string, string[]> = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  google: ['GEMINI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'],
};

/** Gathers what was found, saying where; variables the server has but runs do not see, apart. */
function collector(env: NeedsEnv) {
  const found: string[] = [];
  const hidden: string[] = [];
  return {
    found,
    hidden,
    variable(name: string, note = '') {
      if (env.agent[name]?.trim()) found.push(`${name} (environment${note})`);
      else if (env.server[name]?.trim()) hidden.push(name);
    },
    async file(path: string, what = '') {
      if ((await readRegularFile(path)) !== null) found.push(`${shownPath(path, env.agent)}${what}`);
    },
  };
}

/** What signs the family in, as a run of it in a session will see it. */
export async function signInOf(family: AgentFamily, env: NeedsEnv): Promise<SignIn> {
  const at = personFolders(env.agent);
  const seen = collector(env);
  const fix = (text = FIXES[family]) => ({ found: seen.found, hidden: seen.hidden, fix: text });
  if (family === 'claude-code') {
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'])
      seen.variable(name);
    // Amazon Bedrock and Google Vertex AI sign in with their clouds' own credentials.
    for (const name of ['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX']) seen.variable(name);
    await seen.file(join(at.claude, '.credentials.json'));
    if (stringAt(await readJson(at.claudeGlobal), 'primaryApiKey'))
      seen.found.push(`primaryApiKey in ${shownPath(at.claudeGlobal, env.agent)}`);
    return fix();
  }
  if (family === 'codex') {
    const configPath = join(at.codex, 'config.toml');
    const config = await readToml(configPath);
    const provider = stringAt(config, 'model_provider') ?? 'openai';
    const own = objectAt(objectAt(config, 'model_providers'), provider);
    if (provider !== 'openai' && own) {
      // A provider of the person's own: its key is the variable it names, or none at all.
      const key = stringAt(own, 'env_key');
      const where = `model_providers.${provider}.env_key in ${shownPath(configPath, env.agent)}`;
      if (key === undefined) {
        seen.found.push(
          `none needed (model_providers.${provider} in ${shownPath(configPath, env.agent)} names no env_key)`,
        );
        return fix();
      }
      seen.variable(key, `, named by ${where}`);
      return fix(`Set ${key} (what ${where} names) in the environment Session Desk starts with.`);
    }
    seen.variable('OPENAI_API_KEY');
    await seen.file(join(at.codex, 'auth.json'));
    return fix();
  }
  if (family === 'gemini') {
    for (const name of ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'])
      seen.variable(name);
    await seen.file(join(at.gemini, 'oauth_creds.json'));
    return fix();
  }
  if (family === 'opencode') {
    const configPath = join(at.opencodeConfig, 'opencode.json');
    const config = await readJson(configPath);
    const auth = (await readJson(join(at.opencodeData, 'auth.json'))) ?? {};
    const chosen = opencodeModel(config)?.provider;
    const providers = chosen
      ? [chosen]
      : [...new Set([...Object.keys(auth), ...Object.keys(OPENCODE_PROVIDER_KEYS)])];
    for (const provider of providers) {
      if (provider in auth)
        seen.found.push(`${provider} in ${shownPath(join(at.opencodeData, 'auth.json'), env.agent)}`);
      if (stringAt(objectAt(objectAt(objectAt(config, 'provider'), provider), 'options'), 'apiKey'))
        seen.found.push(`the apiKey of provider ${provider} in ${shownPath(configPath, env.agent)}`);
      for (const name of OPENCODE_PROVIDER_KEYS[provider] ?? []) seen.variable(name);
    }
    return fix();
  }
  const dotEnvPath = join(at.qwen, '.env');
  const dotEnv = await readDotEnv(dotEnvPath);
  if (dotEnv.OPENAI_API_KEY) seen.found.push(`OPENAI_API_KEY in ${shownPath(dotEnvPath, env.agent)}`);
  seen.variable('OPENAI_API_KEY');
  await seen.file(join(at.qwen, 'oauth_creds.json'));
  return fix();
}
