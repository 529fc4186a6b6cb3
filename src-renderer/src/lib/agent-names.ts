import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import type { AgentKindInfo } from '../../../src-shared/accounts';
import type { AgentKind } from '../../../src-shared/constants';
import { useAgentKinds } from '../api/queries';
import { AGENT_NAMES } from './usage';

/**
 * An agent's name wherever the dashboard shows it: its kind's ("Claude Code"), or for an ACP
 * agent its own ("OpenCode"), as GET /api/agents names it; its id until that list is known.
 */
export function agentNameOf(
  kind: AgentKind,
  acpAgent: string | undefined,
  kinds: readonly AgentKindInfo[] | undefined,
): string {
  if (kind !== 'acp' || acpAgent === undefined) return AGENT_NAMES[kind];
  return kinds?.find((k) => k.kind === 'acp' && k.acpAgent === acpAgent)?.name ?? acpAgent;
}

/** The agent a request names: a kind (`claude-code`), or an ACP agent by id (`acp:gemini`). */
export function requestingAgentName(agent: string, kinds: readonly AgentKindInfo[] | undefined): string {
  if (agent.startsWith('acp:')) return agentNameOf('acp', agent.slice('acp:'.length), kinds);
  return agent in AGENT_NAMES ? AGENT_NAMES[agent as AgentKind] : agent;
}

/** Names agents; the list of ACP agents is asked for only when `needed` (an ACP agent is named). */
export function useAgentNames(needed: boolean): (kind: AgentKind, acpAgent?: string) => string {
  const kinds = useAgentKinds(needed).data?.agents;
  return (kind, acpAgent) => agentNameOf(kind, acpAgent, kinds);
}

/** The ACP agents' names as far as this page already knows them (nothing is asked). */
export function useKnownAgentKinds(): () => readonly AgentKindInfo[] | undefined {
  const client = useQueryClient();
  return useCallback(
    () => client.getQueryData<{ agents: AgentKindInfo[] }>(['agent-kinds'])?.agents,
    [client],
  );
}
