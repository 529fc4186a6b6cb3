import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AcpAgentSpec } from '../acp/acp-agents.js';
import { personCliFolder } from '../cli/cli-homes.js';
import { parseJsonObject, readRegularFile } from '../cli/home-files.js';
import type { CliKind } from '../cli-kind-names.js';

/**
 * What an agent needs besides its program (a sign-in, a model API to reach), told from the
 * person's own configuration: the files and variables its session's home is seeded from
 * (cli-homes.ts, acp-homes.ts). Read as the seeds read them, as untrusted data.
 */

/** The agents whose sign-in and model Session Desk knows where to look for. */
export type AgentFamily = CliKind | 'opencode' | 'qwen-code';

/** What an agent is, as far as its needs go: a CLI kind, or an ACP agent by its home or its seed. */
export function familyOf(
  kind: string,
  spec?: Pick<AcpAgentSpec, 'id' | 'home' | 'seed'>,
): AgentFamily | undefined {
  if (kind === 'claude-code' || kind === 'codex' || kind === 'gemini') return kind;
  if (kind !== 'acp' || spec === undefined) return undefined;
  if (spec.home !== undefined) return spec.home;
  if (spec.seed !== undefined && (spec.id === 'opencode' || spec.id === 'qwen-code')) return spec.id;
  return undefined;
}

/** Where the check and the run look, and what they see: the agents' environment (HOME the person's). */
export interface NeedsEnv {
  /** The environment runs get: the allow-list of the server's. */
  agent: NodeJS.ProcessEnv;
  /** The server's own environment, to say a variable is set there but not passed on. */
  server: NodeJS.ProcessEnv;
}

const homeOf = (env: NodeJS.ProcessEnv) => env.HOME ?? homedir();

/** A path as a person reads it: under their home, from `~`. */
export function shownPath(path: string, env: NodeJS.ProcessEnv): string {
  const home = homeOf(env);
  return path === home || path.startsWith(home + sep) ? `~${path.slice(home.length)}` : path;
}

export async function readJson(path: string): Promise<Record<string, unknown> | null> {
  return parseJsonObject(await readRegularFile(path));
}

export async function readToml(path: string): Promise<Record<string, unknown> | null> {
  const text = await readRegularFile(path);
  if (text === null) return null;
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** A `.env` file's assignments (`NAME=value`, `export` and quotes allowed), or none. */
export async function readDotEnv(path: string): Promise<Record<string, string>> {
  const text = await readRegularFile(path);
  const values: Record<string, string> = {};
  for (const line of (text ?? '').split('\n')) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/u.exec(line);
    if (!match) continue;
    values[match[1]!] = match[2]!.replace(/^(['"])(.*)\1$/u, '$2');
  }
  return values;
}

export const objectAt = (value: unknown, key: string): Record<string, unknown> | undefined => {
  const inner =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner)
    ? (inner as Record<string, unknown>)
    : undefined;
};

export const stringAt = (value: unknown, key: string): string | undefined => {
  const inner =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof inner === 'string' && inner.trim() !== '' ? inner.trim() : undefined;
};

/** The person's folders each family keeps its sign-in and configuration in. */
export function personFolders(env: NodeJS.ProcessEnv) {
  const home = homeOf(env);
  return {
    claude: personCliFolder('claude-code', env),
    /** Claude Code's global settings file: in CLAUDE_CONFIG_DIR when set, else the home. */
    claudeGlobal: env.CLAUDE_CONFIG_DIR
      ? join(env.CLAUDE_CONFIG_DIR, '.claude.json')
      : join(home, '.claude.json'),
    codex: personCliFolder('codex', env),
    gemini: personCliFolder('gemini', env),
    opencodeConfig: join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'opencode'),
    opencodeData: join(env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'opencode'),
    qwen: env.QWEN_HOME ?? join(home, '.qwen'),
  };
}

/** OpenCode's configured model, `provider/model`, split; none when it names none. */
export function opencodeModel(
  config: Record<string, unknown> | null,
): { provider: string; model: string } | undefined {
  const model = stringAt(config, 'model');
  const at = model?.indexOf('/') ?? -1;
  return model && at > 0 ? { provider: model.slice(0, at), model: model.slice(at + 1) } : undefined;
}
