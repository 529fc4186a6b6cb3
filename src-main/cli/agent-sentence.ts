import { CLI_NAMES } from '../../src-shared/sessions.js';
import type { AgentInForce } from '../agents/run/workspace-agents.js';

/**
 * Which agent a new workspace runs, in a sentence: a workspace made without one runs the demo
 * agent, which only simulates work, and nobody should find that out from a session.
 */
export function agentSentence(workspaceName: string, { settings, source }: AgentInForce): string {
  const workspace = `The workspace ${JSON.stringify(workspaceName)}`;
  const choose = 'until an owner chooses an agent in Settings, then Agent';
  if (source === 'environment') {
    return `${workspace} runs the command SESSIONDESK_AGENT_COMMAND names (${(settings.command ?? []).join(' ')}) ${choose}.`;
  }
  if (source === 'default') {
    return (
      `${workspace} runs the demo agent, which only simulates work, ${choose} ` +
      '(or give --agent claude-code, codex, gemini, or acp with --acp-agent ID).'
    );
  }
  switch (settings.agent) {
    case 'demo':
      return `${workspace} runs the demo agent, which only simulates work.`;
    case 'acp':
      return `${workspace} runs the ACP agent ${settings.acpAgent ?? ''}.`;
    case 'command':
      return `${workspace} runs the agent command ${settings.commandName ?? ''}.`;
    default:
      return `${workspace} runs ${CLI_NAMES[settings.agent]}.`;
  }
}
