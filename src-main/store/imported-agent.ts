import type { AgentKind } from '../../src-shared/constants.js';
import type { HistoryKind } from '../../src-shared/sessions.js';

/**
 * The agent an imported session names: its CLI's own kind, except OpenCode, which Session Desk
 * runs only through the Agent Client Protocol. Its imported sessions say `acp` and `opencode`,
 * as the sessions it ran do, so one `agent=acp:opencode` filter finds both.
 */
export function importedAgent(kind: HistoryKind): { agent: AgentKind; acpAgent: string | null } {
  if (kind === 'opencode') return { agent: 'acp', acpAgent: 'opencode' };
  return { agent: kind, acpAgent: null };
}
