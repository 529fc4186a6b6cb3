import type { AssistantMessage, Message } from '../../src-shared/sessions.js';
import { readMessagePage, type TranscriptSource } from '../sessions/transcript-reads.js';
import { OpenToolCalls } from './agent-events.js';

/** Messages read at a time, from the end, looking for where the last run started. */
const WINDOW = 200;

/** A session's last run as its transcript holds it: its prompt, and its messages since. */
export interface LastRun {
  /** The person's message the run answered; none when no prompt follows the last result. */
  prompt?: string;
  messages: Message[];
}

/**
 * A session's last run: the messages after its last prompt or result. Read from the end, a
 * window at a time, so a long transcript is not read whole.
 */
export async function lastRun(source: TranscriptSource, sessionId: string): Promise<LastRun> {
  const row = source.repos.sessions.find(sessionId);
  if (!row) return { messages: [] };
  let tail: Message[] = [];
  for (let end = row.messageCount; end > 0;) {
    const from = Math.max(0, end - WINDOW);
    const page = await readMessagePage(source, row, from, end - from, Infinity);
    const messages = page.messages.map((bytes) => JSON.parse(bytes.toString('utf8')) as Message);
    tail = [...messages, ...tail];
    end = from;
    const start = messages.findLastIndex((m) => m.type === 'user' || m.type === 'result');
    if (start < 0) continue;
    const first = messages[start];
    const run = { messages: tail.slice(start + 1) };
    return first?.type === 'user' ? { prompt: first.message.content, ...run } : run;
  }
  return { messages: tail };
}

/**
 * Error results for the tool calls a run cut off by a crash of the server left open, one
 * message per parent, as a run's own end gives them; none when every call has its result.
 */
export function unfinishedToolResults(run: LastRun): AssistantMessage[] {
  const open = new OpenToolCalls();
  for (const message of run.messages) {
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
