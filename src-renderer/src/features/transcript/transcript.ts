import {
  TranscriptApprovalDecidedSchema,
  TranscriptApprovalSchema,
  type TranscriptApproval,
  type TranscriptApprovalDecided,
} from '../../../../src-shared/approvals';
import type { TranscriptReview } from '../../../../src-shared/review';
import type { Message } from '../../../../src-shared/sessions';
import type { z } from 'zod';

type Block = Extract<Message, { type: 'assistant' }>['message']['content'][number];
type ToolUse = Extract<Block, { type: 'tool_use' }>;
type ToolResult = Extract<Block, { type: 'tool_result' }>;

/** A tool call's state: a call without a result is running, or ended once its run has. */
export type ToolState = 'running' | 'done' | 'error' | 'ended';

/** One entry of a todo list as an agent's `TodoWrite` call sends it. */
export interface TodoEntry {
  title: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/** What the transcript shows, in conversation order. */
export type TranscriptItem =
  /** `review`: a review's comments, each at its lines (`text` is what the agent was sent). */
  | { kind: 'user'; key: string; text: string; review?: TranscriptReview }
  | { kind: 'text'; key: string; text: string }
  | { kind: 'thinking'; key: string; text: string }
  | {
      kind: 'tool';
      key: string;
      use: ToolUse;
      result: ToolResult | null;
      state: ToolState;
      /** What the sub-agent this call started said and did (its messages name the call). */
      children?: TranscriptItem[];
    }
  /**
   * `runOver`: the run that wrote it has ended (a result follows it, or the session is over)
   * with this list as its last word, so what it leaves open is not done. A list the run updated
   * again afterwards is shown as it stood (`superseded`): its open tasks were not left.
   */
  | { kind: 'todo'; key: string; todos: TodoEntry[]; runOver: boolean; superseded: boolean }
  | { kind: 'orphan-result'; key: string; result: ToolResult }
  /**
   * What the agent asked before it acted, in place: `decided` once the transcript says what
   * became of it; `text` is the message's own words, for a request written without `detail`.
   */
  | {
      kind: 'approval';
      key: string;
      request: TranscriptApproval;
      text: string;
      decided: TranscriptApprovalDecided | null;
    }
  | { kind: 'approval-decided'; key: string; decided: TranscriptApprovalDecided; text: string }
  | {
      kind: 'result';
      key: string;
      outcome: 'success' | 'error' | 'stopped';
      text: string;
      durationMs: number;
      turns: number;
    };

const TODO_TOOLS = new Set(['TodoWrite', 'todo_write', 'update_plan']);

type AssistantMessage = Extract<Message, { type: 'assistant' }>;

/**
 * A field of a message read with its schema, once per message, so a row rebuilt as messages
 * arrive keeps the same parts; null when absent or malformed (then the words are shown instead).
 */
function fieldReader<T>(field: string, schema: z.ZodType<T>): (message: AssistantMessage) => T | null {
  const parsed = new WeakMap<AssistantMessage, T | null>();
  return (message) => {
    if (!(field in message)) return null;
    if (!parsed.has(message)) {
      const result = schema.safeParse((message as Record<string, unknown>)[field]);
      parsed.set(message, result.success ? result.data : null);
    }
    return parsed.get(message) ?? null;
  };
}

/** The request a message carries (`approval`), or null. */
export const requestOf = fieldReader<TranscriptApproval>('approval', TranscriptApprovalSchema);
/** The decision a message tells (`approvalDecided`), or null. */
export const decisionOf = fieldReader<TranscriptApprovalDecided>(
  'approvalDecided',
  TranscriptApprovalDecidedSchema,
);

const textOf = (message: AssistantMessage) =>
  message.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n\n');

/** The todo list a task-update call carries, or null when it is some other tool call. */
export function todosOf(use: ToolUse): TodoEntry[] | null {
  if (!TODO_TOOLS.has(use.name) || typeof use.input !== 'object' || use.input === null) return null;
  const input = use.input as { todos?: unknown; plan?: unknown };
  const list = Array.isArray(input.todos) ? input.todos : Array.isArray(input.plan) ? input.plan : null;
  if (!list) return null;
  return list.flatMap((raw: unknown): TodoEntry[] => {
    if (typeof raw !== 'object' || raw === null) return [];
    const entry = raw as { content?: unknown; step?: unknown; status?: unknown };
    const title = typeof entry.content === 'string' ? entry.content : entry.step;
    if (typeof title !== 'string') return [];
    const status = entry.status === 'completed' || entry.status === 'in_progress' ? entry.status : 'pending';
    return [{ title, status }];
  });
}

/** A tool result's content as text: a string, or the text parts of a content array. */
export function toolResultText(result: ToolResult): string {
  if (typeof result.content === 'string') return result.content;
  return result.content
    .map((part) =>
      typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string'
        ? part.text
        : JSON.stringify(part),
    )
    .join('\n');
}

/**
 * Flattens messages into transcript items, pairing each tool use with its result (which
 * arrives in a later block or message) so they show as one collapsible step. A tool call
 * without a result has ended when a result message follows it or the session is no longer
 * active: its run is over, so it is not "running" any more.
 *
 * `firstIndex` is the position of `messages[0]` in the conversation when only its later part
 * has been read: keys stay the same as earlier messages arrive, and a tool result whose call
 * is not among the messages read waits for them instead of showing on its own.
 */
export function buildTranscript(messages: Message[], sessionActive = true, firstIndex = 0): TranscriptItem[] {
  const lastResultAt = messages.findLastIndex((m) => m.type === 'result');
  const results = new Map<string, ToolResult>();
  const useIds = new Set<string>();
  const todoIds = new Set<string>();
  const decidedById = new Map<string, TranscriptApprovalDecided>();
  for (const message of messages) {
    if (message.type !== 'assistant') continue;
    const decided = decisionOf(message);
    if (decided) decidedById.set(decided.id, decided);
    for (const block of message.message.content) {
      if (block.type === 'tool_use') useIds.add(block.id);
      if (block.type === 'tool_use' && todosOf(block)) todoIds.add(block.id);
      if (block.type === 'tool_result' && !results.has(block.tool_use_id))
        results.set(block.tool_use_id, block);
    }
  }
  // A sub-agent's messages go inside the call that started it, wherever they were written (an
  // import reads a sub-agent's file after the conversation's, past the run's result).
  const nested = new Map<string, number[]>();
  messages.forEach((message, m) => {
    const parent = message.type === 'assistant' ? message.parent_tool_use_id : undefined;
    if (parent === undefined || !useIds.has(parent)) return;
    nested.set(parent, [...(nested.get(parent) ?? []), m]);
  });
  // Where each task list was written, and each run's end: a list is superseded when its run
  // wrote another one after it (a sub-agent's list is its own).
  const todoAt: number[] = [];
  const resultAt: number[] = [];
  messages.forEach((message, m) => {
    if (message.type === 'result') resultAt.push(m);
    if (message.type !== 'assistant') return;
    if (message.message.content.some((block) => block.type === 'tool_use' && todosOf(block))) todoAt.push(m);
  });
  const updatedAgain = (m: number): boolean => {
    const parent = (messages[m] as AssistantMessage).parent_tool_use_id;
    const next = todoAt.find((t) => t > m && (messages[t] as AssistantMessage).parent_tool_use_id === parent);
    const end = resultAt.find((r) => r > m);
    return next !== undefined && (end === undefined || next < end);
  };
  const placed = new Set<number>();
  const topLevel = messages.flatMap((message, m) =>
    message.type === 'assistant' && message.parent_tool_use_id && useIds.has(message.parent_tool_use_id)
      ? []
      : [m],
  );

  function itemsOf(positions: number[]): TranscriptItem[] {
    const items: TranscriptItem[] = [];
    for (const m of positions) {
      const message = messages[m]!;
      if (placed.has(m)) continue;
      placed.add(m);
      const at = firstIndex + m;
      if (message.type === 'user') {
        const { review } = message;
        items.push({
          kind: 'user',
          key: `${at}`,
          text: message.message.content,
          ...(review ? { review } : {}),
        });
        continue;
      }
      if (message.type === 'result') {
        items.push({
          kind: 'result',
          key: `${at}`,
          outcome:
            message.stopped === true
              ? 'stopped'
              : message.subtype === 'success' && !message.is_error
                ? 'success'
                : 'error',
          text: message.result,
          durationMs: message.duration_ms,
          turns: message.num_turns,
        });
        continue;
      }
      const request = requestOf(message);
      if (request) {
        const decided = decidedById.get(request.id) ?? null;
        items.push({ kind: 'approval', key: `${at}`, request, text: textOf(message), decided });
        continue;
      }
      const decided = decisionOf(message);
      if (decided) {
        items.push({ kind: 'approval-decided', key: `${at}`, decided, text: textOf(message) });
        continue;
      }
      message.message.content.forEach((block, b) => {
        const key = `${at}.${b}`;
        if (block.type === 'text') items.push({ kind: 'text', key, text: block.text });
        else if (block.type === 'thinking') items.push({ kind: 'thinking', key, text: block.thinking });
        else if (block.type === 'tool_use') {
          const todos = todosOf(block);
          if (todos) {
            // Updates in a row say one thing: where the list stands after the last of them.
            if (items.at(-1)?.kind === 'todo') items.pop();
            const superseded = updatedAgain(m);
            items.push({
              kind: 'todo',
              key,
              todos,
              runOver: !superseded && (!sessionActive || lastResultAt > m),
              superseded,
            });
            return;
          }
          const result = results.get(block.id) ?? null;
          const ended = !sessionActive || lastResultAt > m;
          const state: ToolState =
            result === null ? (ended ? 'ended' : 'running') : result.is_error === true ? 'error' : 'done';
          const children = itemsOf(nested.get(block.id) ?? []);
          items.push({
            kind: 'tool',
            key,
            use: block,
            result,
            state,
            ...(children.length > 0 ? { children } : {}),
          });
        } else if (todoIds.has(block.tool_use_id)) {
          // "Todos updated": the update itself is shown.
        } else if (!useIds.has(block.tool_use_id) && firstIndex > 0) {
          // Its call may be in the messages not read yet: it is shown with it once they are.
        } else if (!useIds.has(block.tool_use_id) || results.get(block.tool_use_id) !== block) {
          // Shown with its tool use, unless nothing asked for it (or it repeats).
          items.push({ kind: 'orphan-result', key, result: block });
        }
      });
    }
    return items;
  }
  return itemsOf(topLevel);
}

/** A one-line summary of a tool call's input, for its collapsed header. */
export function toolSummary(use: ToolUse): string {
  const input = use.input;
  if (input && typeof input === 'object') {
    for (const field of ['command', 'file_path', 'path', 'pattern', 'url', 'description']) {
      const value = (input as Record<string, unknown>)[field];
      if (typeof value === 'string' && value.trim() !== '') return value.split('\n')[0] ?? value;
    }
  }
  return '';
}

/** The words an item shows (folded or not), for finding it in the transcript. */
export function itemText(item: TranscriptItem): string {
  switch (item.kind) {
    case 'user':
    case 'text':
    case 'thinking':
      return item.text;
    case 'result':
      return item.text;
    case 'todo':
      return item.todos.map((todo) => todo.title).join('\n');
    case 'orphan-result':
      return toolResultText(item.result);
    case 'approval':
      return [item.request.title, item.request.detail ?? item.text].join('\n');
    case 'approval-decided':
      return item.text;
    case 'tool':
      return [
        item.use.name,
        JSON.stringify(item.use.input),
        item.result ? toolResultText(item.result) : '',
        ...(item.children ?? []).map(itemText),
      ].join('\n');
  }
}
