/**
 * What an agent's process sees of the server's environment: an allow-list, never the
 * whole thing. The server's own settings (SESSIONDESK_*) and anything else it was started
 * with (tokens of other tools, say) stay out unless the administrator names them in
 * SESSIONDESK_AGENT_ENV.
 */
const BASE = [
  // Finding programs, the user, the locale, the terminal and temporary files.
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TZ',
  'TMPDIR',
  'SHELL',
  // The user's git set-up (a sandbox is a clone), ssh agent, and the CLIs' own configuration.
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'SSH_AUTH_SOCK',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
  // Windows needs these to start most programs at all.
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'TEMP',
  'TMP',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
];

/** The variables the agent CLIs read for their model API and their network. */
const FOR_AGENT_KINDS = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_MODEL',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_CONFIG_DIR',
  // Claude Code refuses to skip its permission prompts as root unless told it is in a sandbox.
  'IS_SANDBOX',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'OPENAI_ORG_ID',
  'CODEX_HOME',
  'GEMINI_API_KEY',
  'GEMINI_MODEL',
  // Without it Gemini CLI calls Google's own endpoint, whatever else is set.
  'GOOGLE_GEMINI_BASE_URL',
  'GOOGLE_API_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_LOCATION',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

const PREFIXES = ['LC_'];

/** Never passed on, even when named: Session Desk's own settings, the admin token among them. */
const OWN = /^SESSIONDESK_/iu;

/** SESSIONDESK_AGENT_ENV: more names to pass on, separated by commas or spaces. */
export function extraAgentEnvNames(value: string | undefined): string[] {
  const names = (value ?? '').split(/[\s,]+/u).filter((n) => n !== '');
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/u.test(n));
  if (bad !== undefined) throw new Error(`SESSIONDESK_AGENT_ENV: "${bad}" is not a variable name`);
  const own = names.find((n) => OWN.test(n));
  if (own !== undefined)
    throw new Error(
      `SESSIONDESK_AGENT_ENV: ${own} is one of Session Desk's own settings and is never passed on`,
    );
  return names;
}

export function agentEnvironment(
  source: NodeJS.ProcessEnv,
  extraNames: readonly string[] = [],
): NodeJS.ProcessEnv {
  const allowed = new Set([...BASE, ...FOR_AGENT_KINDS, ...extraNames]);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || OWN.test(name)) continue;
    if (allowed.has(name) || PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  return env;
}
