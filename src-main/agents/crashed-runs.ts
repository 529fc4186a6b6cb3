import type { AssistantMessage, Message } from '../../src-shared/sessions.js';
import { readMessagePage, type TranscriptSource } from '../sessions/transcript-reads.js';
import { OpenToolCalls } from './agent-events.js';

/** Messages read at a time, from the end, looking for where the last run started. */
const WINDOW = 200;

/**
 * The messages of a session's last run: those after its last prompt or result. Read from the
 * end, a window at a time, so a long transcript is not read whole.
 */
async function lastRunMessages(source: TranscriptSource, sessionId: string): Promise<Message[]> {
  const row = source.repos.sessions.find(sessionId);
  if (!row) return [];
  let tail: Message[] = [];
  for (let end = row.messageCount; end > 0;) {
    const from = Math.max(0, end - WINDOW);
    const page = await readMessagePage(source, row, from, end - from, Infinity);
    const messages = page.messages.map((bytes) => JSON.parse(bytes.toString('utf8')) as Message);
    tail = [...messages, ...tail];
    end = from;
    const start = messages.findLastIndex((m) => m.type === 'user' || m.type === 'result');
    if (start >= 0) return tail.slice(start + 1);
  }
  return tail;
}

/**
 * Error results for the tool calls a run cut off by a crash of the server left open, one
 * message per parent, as a run's own end gives them; none when every call has its result.
 */
export async function unfinishedToolResults(
  source: TranscriptSource,
  sessionId: string,
): Promise<AssistantMessage[]> {
  const open = new OpenToolCalls();
  for (const message of await lastRunMessages(source, sessionId)) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) {
      if (block.type === 'tool_use') open.opened(block.id, message.parent_tool_use_id ?? undefined);
      else if (block.type === 'tool_result') open.closed(block.tool_use_id);
    }
  }
  return open.closeAll().flatMap((event) => {
    if (event.kind !== 'assistant') return [];
    const closing: AssistantMessage = { type: 'assistant', message: { content: event.content } };
    if (event.parentToolUseId !== undefined) closing.parent_tool_use_id = event.parentToolUseId;
    return [closing];
  });
}
