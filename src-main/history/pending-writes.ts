import type { Message, Task } from '../../src-shared/sessions.js';
import type { Repos } from '../store/storage.js';
import { MessageTooLargeError } from '../store/errors.js';
import type { HistoryEvent } from './history-events.js';
import { storedEvents } from './stored-values.js';

/** What a batch of a file's lines asks its session to record, in one store write. */
export interface Pending {
  /** Each with its payload once encoded (`messagePayload`), ahead of the write. */
  messages: { message: Message; authorId: string | null; at: string; payload?: Buffer }[];
  tasks?: Task[];
  runs: { usage: Extract<HistoryEvent, { kind: 'run' }>; at: string }[];
  firstPrompt?: string;
}

/** Adds what a line's events ask for, as it may be stored (stored-values.ts). */
export function collect(pending: Pending, events: HistoryEvent[], at: string, authorId: string): void {
  for (const event of storedEvents(events)) {
    switch (event.kind) {
      case 'prompt':
        pending.firstPrompt ??= event.text;
        pending.messages.push({ message: { type: 'user', message: { content: event.text } }, authorId, at });
        break;
      case 'assistant':
        pending.messages.push({
          message: {
            type: 'assistant',
            message: { content: event.content },
            ...(event.parentToolUseId ? { parent_tool_use_id: event.parentToolUseId } : {}),
          },
          authorId: null,
          at,
        });
        break;
      case 'notice':
        pending.messages.push({
          message: {
            type: 'assistant',
            message: { content: [{ type: 'text', text: event.text }] },
            notice: event.level,
          },
          authorId: null,
          at,
        });
        break;
      case 'result':
        pending.messages.push({ message: event.result, authorId: null, at });
        break;
      case 'tasks':
        pending.tasks = event.tasks;
        break;
      case 'run':
        pending.runs.push({ usage: event, at });
        break;
    }
  }
}

/**
 * Appends a message read from a file; one larger than a session stores is replaced by a notice
 * saying so (inside the store's write: the size is checked before anything is written).
 */
export async function appendRead(
  repos: Repos,
  sessionId: string,
  workspaceId: string,
  { message, authorId, at, payload }: Pending['messages'][number],
): Promise<void> {
  try {
    await repos.sessions.appendMessage(sessionId, workspaceId, message, authorId, at, payload);
  } catch (err) {
    if (!(err instanceof MessageTooLargeError)) throw err;
    const mib = (err.bytes / 1024 / 1024).toFixed(1);
    const text = `A message of ${mib} MiB was left out: a session keeps messages up to 16 MiB.`;
    const notice: Message = {
      type: 'assistant',
      message: { content: [{ type: 'text', text }] },
      notice: 'error',
    };
    await repos.sessions.appendMessage(sessionId, workspaceId, notice, null, at);
  }
}
