import { basename } from 'node:path';
import type { CliKind } from '../cli-kind-names.js';
import { ACP_REGISTRY, type RegistryAgent } from './acp-registry.js';
import { readNamedCommands } from '../command/named-commands.js';
import { seedOpenCode, seedQwenCode, type AcpHomeSeed } from './acp-homes.js';

/**
 * The agents Session Desk drives through the Agent Client Protocol (stdio JSON-RPC), by the
 * ids the API uses: how each is started in ACP mode, and which of the CLIs' homes it keeps its
 * state in (so that it gets the session's own, seeded with sign-in only, as the native kinds do).
 */
export interface AcpAgentSpec {
  id: string;
  name: string;
  /** Its program's name on PATH. */
  program: string;
  /** The arguments that start it as an ACP agent on stdio. */
  args: readonly string[];
  /** The environment variable that may name its program's path instead. */
  envVar: string;
  /** The npm package it installs from, when it does. */
  npm?: string;
  /**
   * The native CLI whose home it shares (the Gemini CLI in ACP mode is the Gemini CLI; the
   * Claude and Codex adapters run those CLIs' engines): its state goes in the session's home.
   */
  home?: CliKind;
  /** For an agent of its own: seeds its folder in the session's home (sign-in, model choice). */
  seed?: AcpHomeSeed;
  /**
   * Where its version is read: `--version`, or the npm package's `package.json` (the adapters
   * have no `--version`: asked for one they start as ACP agents and wait), or not at all (an
   * agent not tried here).
   */
  version: 'flag' | 'npm' | 'none';
  /**
   * Whether Session Desk offers it the session folder's files (`fs/*`). Gemini CLI 0.61 cannot
   * create a file through them: it takes the protocol's answer for a missing file for a failure
   * (google-gemini/gemini-cli#9280), so it keeps to its own file tools.
   */
  clientFiles: boolean;
  /** Variables its launch sets (the registry's, turning its self-updates off, say). */
  env?: Readonly<Record<string, string>>;
  /**
   * Whether its runs are tested here against a scripted model server. The registry's other
   * agents need a sign-in that cannot be had here: they are offered when installed, untested.
   */
  tested: boolean;
}

export const ACP_AGENTS: readonly AcpAgentSpec[] = [
  {
    id: 'gemini',
    name: 'Gemini CLI',
    program: 'gemini',
    args: ['--acp'],
    envVar: 'SESSIONDESK_GEMINI_BIN',
    npm: '@google/gemini-cli',
    home: 'gemini',
    version: 'flag',
    clientFiles: false,
    tested: true,
  },
  {
    id: 'opencode',
    name: 'OpenCode',
    program: 'opencode',
    args: ['acp'],
    envVar: 'SESSIONDESK_OPENCODE_BIN',
    npm: 'opencode-ai',
    seed: seedOpenCode,
    version: 'flag',
    clientFiles: true,
    tested: true,
  },
  {
    id: 'qwen-code',
    name: 'Qwen Code',
    program: 'qwen',
    // Its default approval mode asks nothing; Session Desk answers every question in one place.
    args: ['--acp', '--approval-mode', 'default'],
    envVar: 'SESSIONDESK_QWEN_BIN',
    npm: '@qwen-code/qwen-code',
    seed: seedQwenCode,
    version: 'flag',
    clientFiles: true,
    tested: true,
  },
  {
    id: 'claude-code',
    name: 'Claude Agent',
    program: 'claude-agent-acp',
    args: [],
    envVar: 'SESSIONDESK_CLAUDE_AGENT_ACP_BIN',
    npm: '@zed-industries/claude-agent-acp',
    home: 'claude-code',
    version: 'npm',
    clientFiles: true,
    tested: true,
  },
  {
    id: 'codex',
    name: 'Codex',
    program: 'codex-acp',
    // Codex's own sandbox cannot start inside Session Desk's, which confines it instead.
    args: ['-c', 'sandbox_mode="danger-full-access"', '-c', 'approval_policy="untrusted"'],
    envVar: 'SESSIONDESK_CODEX_ACP_BIN',
    npm: '@zed-industries/codex-acp',
    home: 'codex',
    version: 'npm',
    clientFiles: true,
    tested: true,
  },
];

/** The registry's ids of the agents above, where Session Desk knows them by another. */
const REGISTRY_IDS: Readonly<Record<string, string>> = {
  'claude-acp': 'claude-code',
  'codex-acp': 'codex',
};

const programVariable = (id: string) => `SESSIONDESK_ACP_${id.toUpperCase().replace(/[^A-Z0-9]/gu, '_')}_BIN`;

/**
 * A registry agent as Session Desk starts it: its program on PATH (an npm or PyPI package's is
 * its `cmd`, else named as the package; a binary's is its archive's `cmd`), never fetched at run
 * time.
 */
function fromRegistry(agent: RegistryAgent): AcpAgentSpec | undefined {
  const { npx, uvx, binary } = agent.distribution;
  const launch = npx ?? uvx ?? binary?.['linux-x86_64'] ?? Object.values(binary ?? {})[0];
  if (!launch) return undefined;
  const fromPackage = (npx ?? uvx)?.package?.replace(/(?<=.)@[^@/]+$/u, '');
  const npm = npx ? fromPackage : undefined;
  const program = basename(launch.cmd ?? fromPackage ?? agent.id);
  return {
    id: agent.id,
    name: agent.name,
    program,
    args: launch.args ?? [],
    envVar: programVariable(agent.id),
    ...(npm ? { npm } : {}),
    ...(launch.env ? { env: launch.env } : {}),
    version: npm ? 'npm' : 'none',
    clientFiles: true,
    tested: false,
  };
}

const REGISTRY_AGENTS: readonly AcpAgentSpec[] = ACP_REGISTRY.agents.flatMap((agent) => {
  const id = REGISTRY_IDS[agent.id] ?? agent.id;
  if (ACP_AGENTS.some((known) => known.id === id)) return [];
  return fromRegistry(agent) ?? [];
});

/** The file of the ACP agents the administrator defined (`sessiondesk acp-agent set`). */
export const ADMIN_ACP_AGENTS_FILE = 'acp-agents.json';

/**
 * Every ACP agent Session Desk can run: its own, the registry's others, and the administrator's
 * (read afresh from the data directory at each use). An administrator's agent named as a known
 * one replaces its launch command and keeps the rest (its home in the session's).
 */
export function knownAcpAgents(dataDir?: string): AcpAgentSpec[] {
  const all = [...ACP_AGENTS, ...REGISTRY_AGENTS];
  if (dataDir === undefined) return all;
  for (const [id, [program, ...args]] of Object.entries(readNamedCommands(dataDir, ADMIN_ACP_AGENTS_FILE))) {
    const known = all.findIndex((agent) => agent.id === id);
    const base: AcpAgentSpec =
      known >= 0 ? all[known]! : { ...ADMIN_DEFAULTS, id, name: id, envVar: programVariable(id) };
    const spec: AcpAgentSpec = { ...base, program: program!, args, version: 'none', tested: false };
    if (known >= 0) all[known] = spec;
    else all.push(spec);
  }
  return all;
}

const ADMIN_DEFAULTS = { program: '', args: [], version: 'none', clientFiles: true, tested: false } as const;

/**
 * An ACP agent's name wherever it is shown: its own ("OpenCode"), and for one that runs a native
 * CLI's engine (Gemini CLI, the Claude and Codex adapters), said apart from that CLI.
 */
export function acpAgentLabel(spec: Pick<AcpAgentSpec, 'name' | 'home'>): string {
  return spec.home === undefined ? spec.name : `${spec.name} (Agent Client Protocol)`;
}

export function acpAgent(id: string, dataDir?: string): AcpAgentSpec | undefined {
  return knownAcpAgents(dataDir).find((agent) => agent.id === id);
}
