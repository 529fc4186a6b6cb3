import { AGENT_KINDS, type AgentKind } from '../../src-shared/constants.js';
import type { HistoryKind } from '../../src-shared/sessions.js';

/**
 * The agent an imported session names: its CLI's own kind where Session Desk drives that CLI
 * itself, else the ACP agent of the same id (Qwen Code and OpenCode, which Session Desk runs only
 * through the Agent Client Protocol): `agent: "acp", acpAgent: "opencode"`, as the sessions it
 * ran with that agent say, so that one `agent=acp:opencode` filter finds both.
 */
export function importedAgent(kind: HistoryKind): { agent: AgentKind; acpAgent: string | null } {
  return (AGENT_KINDS as readonly string[]).includes(kind)
    ? { agent: kind as AgentKind, acpAgent: null }
    : { agent: 'acp', acpAgent: kind };
}
