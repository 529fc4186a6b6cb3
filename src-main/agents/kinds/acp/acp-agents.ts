import type { CliKind } from '../cli-kind-names.js';

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
    tested: true,
  },
];

export function acpAgent(id: string): AcpAgentSpec | undefined {
  return ACP_AGENTS.find((agent) => agent.id === id);
}
