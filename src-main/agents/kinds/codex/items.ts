import type { ContentBlock, Task } from '../../../../src-shared/sessions.js';

/** One `item` of `codex exec --json` (see its ThreadItem): an id, a type and that type's fields. */
export type CodexItem = Record<string, unknown> & { id: string; type: string };

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Item types that are tool calls: a tool_use when they start, a tool_result when they complete. */
export const TOOL_ITEMS = new Set([
  'command_execution',
  'file_change',
  'mcp_tool_call',
  'web_search',
  'collab_tool_call',
]);

/** The tool call an item stands for, named after Codex's own tools. */
export function toolUseOf(item: CodexItem): ContentBlock {
  const base = { type: 'tool_use' as const, id: item.id };
  switch (item.type) {
    case 'command_execution':
      return { ...base, name: 'shell', input: { command: str(item.command) } };
    case 'file_change':
      return { ...base, name: 'apply_patch', input: { changes: item.changes ?? [] } };
    case 'mcp_tool_call':
      return { ...base, name: `mcp:${str(item.server)}/${str(item.tool)}`, input: item.arguments ?? {} };
    case 'web_search':
      return { ...base, name: 'web_search', input: { query: str(item.query), action: item.action } };
    default:
      return {
        ...base,
        name: `agent:${str(item.tool)}`,
        input: { prompt: item.prompt ?? null, receivers: item.receiver_thread_ids ?? [] },
      };
  }
}

function fileChangeSummary(item: CodexItem): string {
  const changes = Array.isArray(item.changes) ? (item.changes as { path?: unknown; kind?: unknown }[]) : [];
  return changes.map((c) => `${str(c.kind)} ${str(c.path)}`).join('\n');
}

function collabSummary(item: CodexItem): string {
  const states = (item.agents_states ?? {}) as Record<string, { status?: unknown; message?: unknown }>;
  return Object.entries(states)
    .map(
      ([thread, state]) =>
        `${thread}: ${str(state.status)}${state.message ? ` — ${str(state.message)}` : ''}`,
    )
    .join('\n');
}

/** The result of a completed tool item; a failed status or a non-zero exit code is an error. */
export function toolResultOf(item: CodexItem): ContentBlock {
  const failed = item.status === 'failed' || item.status === 'declined';
  const base = { type: 'tool_result' as const, tool_use_id: item.id };
  switch (item.type) {
    case 'command_execution':
      return {
        ...base,
        content: str(item.aggregated_output),
        is_error: failed || (typeof item.exit_code === 'number' && item.exit_code !== 0),
      };
    case 'file_change':
      return { ...base, content: fileChangeSummary(item), is_error: failed };
    case 'mcp_tool_call': {
      const error = (item.error as { message?: unknown } | null)?.message;
      const content = (item.result as { content?: unknown } | null)?.content;
      if (typeof error === 'string') return { ...base, content: error, is_error: true };
      return { ...base, content: Array.isArray(content) ? content : '', is_error: failed };
    }
    case 'web_search':
      return { ...base, content: `Searched the web for: ${str(item.query)}`, is_error: false };
    default:
      return { ...base, content: collabSummary(item), is_error: failed };
  }
}

/**
 * A `todo_list` item as tasks, ids by position. Codex reports only done or not done, so an
 * unfinished step is `pending` (it does not say which step is under way).
 */
export function todoTasks(item: CodexItem): Task[] {
  const items = Array.isArray(item.items) ? (item.items as { text?: unknown; completed?: unknown }[]) : [];
  return items
    .filter((t) => typeof t.text === 'string')
    .map((t, i) => ({
      id: `todo-${i + 1}`,
      title: str(t.text),
      status: t.completed === true ? 'completed' : 'pending',
    }));
}
