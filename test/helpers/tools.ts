import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CLI_PREFIX, findAgentCli } from './agent-cli.js';
import { ROOT } from './cli.js';

/**
 * A program or build some tests need that the machine may not have. Under CI a missing one
 * fails those tests (CI installs everything: .ci/run); elsewhere they are skipped, saying what
 * is missing. test/helpers/require-tools.ts (vitest) and test/e2e/require-tools.ts (Playwright)
 * apply that to the tests.
 */
export interface Tool {
  /** What a person looks for: the program, and what it is. */
  name: string;
  found: boolean;
  /** How to get it. */
  install: string;
}

/** CI as most CI services set it (CI=true); an empty CI, "0" or "false" is not CI. */
export const IN_CI = !['', '0', 'false'].includes((process.env.CI ?? '').trim().toLowerCase());

export function bubblewrapTool(): Tool {
  return {
    name: 'bwrap (bubblewrap, the agents’ sandbox)',
    found: process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0,
    install: 'apt-get install bubblewrap (Linux only)',
  };
}

export function curlTool(): Tool {
  return {
    name: 'curl',
    found: spawnSync('curl', ['--version']).status === 0,
    install: 'apt-get install curl',
  };
}

/** What a team deploys in front of its server, and what makes the test's certificate. */
export function reverseProxyTools(): Tool[] {
  return [
    { name: 'nginx', found: spawnSync('nginx', ['-v']).status === 0, install: 'apt-get install nginx' },
    { name: 'caddy', found: spawnSync('caddy', ['version']).status === 0, install: 'apt-get install caddy' },
    {
      name: 'openssl',
      found: spawnSync('openssl', ['version']).status === 0,
      install: 'apt-get install openssl',
    },
  ];
}

export function ripgrepTool(): Tool {
  return {
    name: 'rg (ripgrep)',
    found: spawnSync('rg', ['--version']).status === 0,
    install: 'apt-get install ripgrep',
  };
}

/** openssl, which makes the certificates of the tests' identity provider (test/helpers/identity-provider.ts). */
export function opensslTool(): Tool {
  return {
    name: 'openssl',
    found: spawnSync('openssl', ['version']).status === 0,
    install: 'apt-get install openssl',
  };
}

const AGENT_CLIS = {
  claude: ['Claude Code', 'CLAUDE_CODE_BIN'],
  codex: ['Codex', 'CODEX_BIN'],
  gemini: ['Gemini CLI', 'GEMINI_BIN'],
} as const;

/** A real agent CLI, found as findAgentCli finds it: `path` is where, or null. */
export function agentCliTool(program: keyof typeof AGENT_CLIS): Tool & { path: string | null } {
  const [what, variable] = AGENT_CLIS[program];
  const path = findAgentCli(program, variable);
  const prefix = process.env.AGENT_CLIS_PREFIX ?? DEFAULT_CLI_PREFIX;
  return {
    name: `${program} (${what})`,
    found: path !== null,
    path,
    install: `set ${variable}, put ${program} on PATH, or run scripts/install-agent-clis.sh ${prefix} (the prefix AGENT_CLIS_PREFIX names)`,
  };
}

/** The built desktop app and command line (out/), which `npm test` builds before the e2e tests. */
export function builtAppTool(): Tool {
  return {
    name: 'the build in out/ (out/main/main.js)',
    found: existsSync(join(ROOT, 'out', 'main', 'main.js')),
    install: 'npm run build',
  };
}

/** What is missing of `tools`, and how to get it, in one sentence; null when nothing is. */
export function missingTools(tools: Tool[]): string | null {
  const missing = tools.filter((t) => !t.found);
  if (missing.length === 0) return null;
  return missing.map((t) => `no ${t.name}: ${t.install}`).join('; ');
}

const warned = new Set<string>();
/** Says once per process that tests are skipped, and why. */
export function warnSkipped(reason: string): void {
  if (warned.has(reason)) return;
  warned.add(reason);
  console.warn(`Skipping tests: ${reason}`);
}
