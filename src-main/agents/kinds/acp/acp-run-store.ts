import type { SessionService } from '../../../sessions/service.js';
import type { Repos } from '../../../store/storage.js';
import type { CliRunStore } from '../cli/cli-agent.js';
import type { AcpAgentSpec } from './acp-agents.js';

/**
 * An ACP agent's session id, kept on the session as a CLI's conversation is, prefixed with the
 * agent's id (`gemini:…`): a workspace that switches to another ACP agent never asks it to
 * load the first one's session.
 */
export function createAcpRunStore(spec: AcpAgentSpec, service: SessionService, repos: Repos): CliRunStore {
  const prefix = `${spec.id}:`;
  return {
    async previous(sessionId) {
      const conversation = await repos.sessions.conversation(sessionId);
      if (!conversation || conversation.kind !== 'acp' || !conversation.id.startsWith(prefix)) return {};
      return { conversationId: conversation.id.slice(prefix.length) };
    },
    conversation: (sessionId, id) => service.setConversation(sessionId, 'acp', prefix + id),
    finished: (sessionId, run) =>
      service.recordRun(sessionId, {
        kind: 'acp',
        conversationId: run.conversationId === undefined ? undefined : prefix + run.conversationId,
        usage: run.usage,
      }),
  };
}
