import type { SessionService } from '../../../sessions/service.js';
import type { Repos } from '../../../store/storage.js';
import type { CliRunStore } from './cli-agent.js';
import type { CliKind } from '../cli-kind-names.js';

/** A CLI kind's conversations and usage, kept on the session through the session service. */
export function createCliRunStore(kind: CliKind, service: SessionService, repos: Repos): CliRunStore {
  return {
    async previous(sessionId) {
      const conversation = await repos.sessions.conversation(sessionId);
      // Another kind's conversation cannot be resumed: this kind starts its own.
      if (!conversation || conversation.kind !== kind) return {};
      return {
        conversationId: conversation.id,
        usageBefore: await repos.sessions.conversationUsage(sessionId, conversation.id),
      };
    },
    conversation: (sessionId, id) => service.setConversation(sessionId, kind, id),
    finished: (sessionId, run) => service.recordRun(sessionId, { kind, ...run }),
  };
}
