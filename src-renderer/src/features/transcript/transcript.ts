import type { Message } from '../../../../src-shared/sessions';

type Block = Extract<Message, { type: 'assistant' }>['message']['content'][number];
type ToolUse = Extract<Block, { type: 'tool_use' }>;
type ToolResult = Extract<Block, { type: 'tool_result' }>;

/** What the transcript shows, in conversation order. */
export type TranscriptItem =
  | { kind: 'user'; key: string; text: string }
  | { kind: 'text'; key: string; text: string }
  | { kind: 'thinking'; key: string; text: string }
  | { kind: 'tool'; key: string; use: ToolUse; result: ToolResult | null }
  | { kind: 'orphan-result'; key: string; result: ToolResult }
  | { kind: 'result'; key: string; success: boolean; text: string; durationMs: number; turns: number };

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
 * arrives in a later block or message) so they show as one collapsible step.
 */
export function buildTranscript(messages: Message[]): TranscriptItem[] {
  const results = new Map<string, ToolResult>();
  const useIds = new Set<string>();
  for (const message of messages) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) {
      if (block.type === 'tool_use') useIds.add(block.id);
      if (block.type === 'tool_result' && !results.has(block.tool_use_id))
        results.set(block.tool_use_id, block);
    }
  }
  const items: TranscriptItem[] = [];
  messages.forEach((message, m) => {
    if (message.type === 'user') {
      items.push({ kind: 'user', key: `${m}`, text: message.message.content });
      return;
    }
    if (message.type === 'result') {
      items.push({
        kind: 'result',
        key: `${m}`,
        success: message.subtype === 'success' && !message.is_error,
        text: message.result,
        durationMs: message.duration_ms,
        turns: message.num_turns,
      });
      return;
    }
    message.message.content.forEach((block, b) => {
      const key = `${m}.${b}`;
      if (block.type === 'text') items.push({ kind: 'text', key, text: block.text });
      else if (block.type === 'thinking') items.push({ kind: 'thinking', key, text: block.thinking });
      else if (block.type === 'tool_use') {
        const result = results.get(block.id) ?? null;
        items.push({ kind: 'tool', key, use: block, result });
      } else if (!useIds.has(block.tool_use_id) || results.get(block.tool_use_id) !== block) {
        // Shown with its tool use, unless nothing asked for it (or it repeats).
        items.push({ kind: 'orphan-result', key, result: block });
      }
    });
  });
  return items;
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
