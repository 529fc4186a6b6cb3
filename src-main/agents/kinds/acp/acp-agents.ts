import type { CliKind } from '../cli-kind-names.js';
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
   * have no `--version`: asked for one they start as ACP agents and wait).
   */
  version: 'flag' | 'npm';
  /** Whether its runs are tested here against a scripted model server. */
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
    tested: true,
  },
];

export function acpAgent(id: string): AcpAgentSpec | undefined {
  return ACP_AGENTS.find((agent) => agent.id === id);
}
