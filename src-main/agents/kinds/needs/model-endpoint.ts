import { join } from 'node:path';
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
} from './person-config.js';

/** The model API an agent calls: its URL, and where that came from (a setting, or its default). */
export interface ModelEndpoint {
  url: string;
  source: string;
}

/** The well-known providers' APIs, as OpenCode names them. */
const OPENCODE_PROVIDERS: Record<string, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  google: 'https://generativelanguage.googleapis.com',
};

const fromVariable = (env: NodeJS.ProcessEnv, name: string): ModelEndpoint | undefined => {
  const url = env[name]?.trim();
  return url ? { url, source: name } : undefined;
};

/**
 * The model API the family's agent calls in a session, from the agents' environment and the
 * person's configuration its home is seeded with; undefined where it cannot be told (Amazon
 * Bedrock, Vertex AI, a sign-in whose endpoint the agent picks itself).
 */
export async function modelEndpointOf(
  family: AgentFamily,
  env: NodeJS.ProcessEnv,
): Promise<ModelEndpoint | undefined> {
  const at = personFolders(env);
  if (family === 'claude-code') {
    if (env.CLAUDE_CODE_USE_BEDROCK || env.CLAUDE_CODE_USE_VERTEX) return undefined;
    return (
      fromVariable(env, 'ANTHROPIC_BASE_URL') ?? {
        url: 'https://api.anthropic.com',
        source: "Claude Code's default",
      }
    );
  }
  if (family === 'codex') {
    const configPath = join(at.codex, 'config.toml');
    const config = await readToml(configPath);
    const provider = stringAt(config, 'model_provider') ?? 'openai';
    const baseUrl = stringAt(objectAt(objectAt(config, 'model_providers'), provider), 'base_url');
    if (baseUrl)
      return {
        url: baseUrl,
        source: `model_providers.${provider}.base_url in ${shownPath(configPath, env)}`,
      };
    if (provider !== 'openai') return undefined;
    const openai = fromVariable(env, 'OPENAI_BASE_URL');
    if (openai) return openai;
    // Signed in with a ChatGPT account (tokens, no key), Codex calls ChatGPT's backend.
    const auth = await readJson(join(at.codex, 'auth.json'));
    if (objectAt(auth, 'tokens') && !stringAt(auth, 'OPENAI_API_KEY') && !env.OPENAI_API_KEY)
      return {
        url: 'https://chatgpt.com/backend-api/codex',
        source: "Codex's default for a ChatGPT sign-in",
      };
    return { url: 'https://api.openai.com/v1', source: "Codex's default" };
  }
  if (family === 'gemini') {
    const named = fromVariable(env, 'GOOGLE_GEMINI_BASE_URL');
    if (named) return named;
    if (env.GOOGLE_GENAI_USE_VERTEXAI) return undefined;
    const settings = await readJson(join(at.gemini, 'settings.json'));
    const selected =
      stringAt(objectAt(objectAt(settings, 'security'), 'auth'), 'selectedType') ??
      stringAt(settings, 'selectedAuthType');
    if (selected === 'vertex-ai') return undefined;
    if (selected === 'oauth-personal' || selected === 'login-with-google')
      return {
        url: 'https://cloudcode-pa.googleapis.com',
        source: "Gemini CLI's default for a Google sign-in",
      };
    return { url: 'https://generativelanguage.googleapis.com', source: "Gemini CLI's default" };
  }
  if (family === 'opencode') {
    const configPath = join(at.opencodeConfig, 'opencode.json');
    const config = await readJson(configPath);
    const chosen = opencodeModel(config);
    if (!chosen) return undefined;
    const options = objectAt(objectAt(objectAt(config, 'provider'), chosen.provider), 'options');
    const baseUrl = stringAt(options, 'baseURL');
    if (baseUrl)
      return {
        url: baseUrl,
        source: `provider.${chosen.provider}.options.baseURL in ${shownPath(configPath, env)}`,
      };
    const known = OPENCODE_PROVIDERS[chosen.provider];
    return known ? { url: known, source: `OpenCode's ${chosen.provider} provider` } : undefined;
  }
  // Qwen Code with an OpenAI-compatible key: its base URL, from the environment, else its .env
  // (which sets only what the environment does not).
  const named = fromVariable(env, 'OPENAI_BASE_URL');
  if (named) return named;
  const dotEnvPath = join(at.qwen, '.env');
  const dotEnv = await readDotEnv(dotEnvPath);
  if (dotEnv.OPENAI_BASE_URL)
    return { url: dotEnv.OPENAI_BASE_URL, source: `OPENAI_BASE_URL in ${shownPath(dotEnvPath, env)}` };
  if (dotEnv.OPENAI_API_KEY || env.OPENAI_API_KEY)
    return { url: 'https://api.openai.com/v1', source: "Qwen Code's default for an OpenAI key" };
  return undefined;
}
