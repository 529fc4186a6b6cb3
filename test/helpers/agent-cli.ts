import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `scripts/install-agent-clis.sh` puts the CLIs unless told otherwise. */
export const DEFAULT_CLI_PREFIX = '/tmp/agent-clis';

/** A CLI program: the given env variable, else `name` on PATH, else the install prefix. */
export function findAgentCli(
  name: string,
  envVariable: string,
  prefix = process.env.AGENT_CLIS_PREFIX ?? DEFAULT_CLI_PREFIX,
): string | null {
  const fromEnv = process.env[envVariable];
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  dirs.push(join(prefix, 'node_modules', '.bin'));
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** A model of Codex's catalog; `visibility: 'list'` is one it offers people to pick. */
export interface CodexCatalogModel {
  slug: string;
  visibility: string;
  priority: number;
}

/** The model catalog an installed Codex carries (`codex debug models --bundled`). */
export function bundledCodexModels(codexPath: string): CodexCatalogModel[] {
  const home = mkdtempSync(join(tmpdir(), 'codex-home-'));
  try {
    const catalog = JSON.parse(
      execFileSync(codexPath, ['debug', 'models', '--bundled'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, CODEX_HOME: home },
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { models: CodexCatalogModel[] };
    return catalog.models;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The JavaScript of an installed Gemini CLI's bundle (the folder its program is in), as one text. */
export function geminiBundleSource(geminiPath: string): string {
  const bundle = dirname(realpathSync(geminiPath));
  return readdirSync(bundle)
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(bundle, f), 'utf8'))
    .join('\n');
}

export interface ProgramRun {
  args: string[];
  stdout: string;
  stderr: string;
  code: number | null;
}

export function runProgram(
  bin: string,
  args: string[],
  stdin: string | undefined,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ args, stdout, stderr, code });
    });
    child.stdin.end(stdin ?? '');
  });
}

/** A temp folder holding `repo` (a git repository with one commit on main) and `home`. */
export function makeRunRoot(prefix: string): { root: string; repo: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const repo = join(root, 'repo');
  const home = join(root, 'home');
  mkdirSync(repo);
  mkdirSync(home);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'agent@example.test');
  git('config', 'user.name', 'Agent');
  writeFileSync(join(repo, 'README.md'), '# Demo\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'Initial commit');
  return { root, repo, home };
}

/** The first value of `field` on a line of `type` in JSONL output. */
export function fieldOf(stdout: string, type: string, field: string): string {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    if (record.type === type && typeof record[field] === 'string') return record[field];
  }
  throw new Error(`no ${type}.${field} in the output:\n${stdout.slice(0, 2000)}`);
}

/** The scripted MCP server the Codex scenarios call: test/fixtures/agents/scripted-mcp-server.mjs. */
const SCRIPTED_MCP_SERVER = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'agents',
  'scripted-mcp-server.mjs',
);

/**
 * Writes `config.toml` into a Codex home folder: the scripted Responses server at `baseUrl` as
 * its model provider (key in SCRIPTED_API_KEY), the scripted MCP server as a tool server unless
 * `mcp` is false, and any `settings` (top-level TOML lines).
 */
export function writeScriptedCodexConfig(
  codexHome: string,
  baseUrl: string,
  { mcp = true, settings = [] as string[] } = {},
): void {
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      ...settings,
      '[model_providers.scripted]',
      'name = "Scripted"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_API_KEY"',
      'request_max_retries = 1',
      'stream_max_retries = 2',
      ...(mcp
        ? [
            '[mcp_servers.notes]',
            `command = ${JSON.stringify(process.execPath)}`,
            `args = [${JSON.stringify(SCRIPTED_MCP_SERVER)}]`,
          ]
        : []),
      '',
    ].join('\n'),
  );
}

/**
 * Writes a person's OpenCode configuration into `configHome` (what `~/.config` is): the scripted
 * Chat Completions server at `baseUrl` as its provider, with `settings` beside it.
 */
export function writeScriptedOpencodeConfig(
  configHome: string,
  baseUrl: string,
  settings: object = {},
): void {
  mkdirSync(join(configHome, 'opencode'), { recursive: true });
  writeFileSync(
    join(configHome, 'opencode', 'opencode.json'),
    JSON.stringify({
      model: 'scripted/scripted-model',
      small_model: 'scripted/scripted-model',
      ...settings,
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted',
          options: { baseURL: baseUrl, apiKey: 'scripted' },
          models: { 'scripted-model': { name: 'Scripted model', tool_call: true, reasoning: true } },
        },
      },
    }),
  );
}
