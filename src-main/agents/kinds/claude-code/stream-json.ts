import {
  ContentBlockSchema,
  type ContentBlock,
  type ResultMessage,
  type Task,
} from '../../../../src-shared/sessions.js';

/** What one line of an agent CLI's stream-json output asks the session to record. */
export type StreamAction =
  | { kind: 'assistant'; content: ContentBlock[] }
  | { kind: 'tasks'; tasks: Task[] }
  | { kind: 'result'; result: ResultMessage };

const TODO_STATUS = new Set(['pending', 'in_progress', 'completed']);

/** A TodoWrite call's todos as tasks, ids stable per task (its own id, else its position). */
export function todosToTasks(input: unknown): Task[] | null {
  const todos = (input as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return null;
  const tasks: Task[] = [];
  todos.forEach((todo: unknown, i) => {
    const t = todo as { id?: unknown; content?: unknown; subject?: unknown; status?: unknown };
    const title =
      typeof t.content === 'string' ? t.content : typeof t.subject === 'string' ? t.subject : null;
    if (title === null || typeof t.status !== 'string' || !TODO_STATUS.has(t.status)) return;
    tasks.push({
      id: typeof t.id === 'string' && t.id ? t.id : `task-${i + 1}`,
      title,
      status: t.status as Task['status'],
    });
  });
  return tasks;
}

/**
 * Maps one parsed line of stream-json (as printed by common coding-agent CLIs) to what the
 * session records. Tool results, which such CLIs send as `user` lines, belong to the agent's
 * side; unknown line types and block types are skipped.
 */
export function mapStreamLine(line: unknown): StreamAction[] {
  if (typeof line !== 'object' || line === null) return [];
  const record = line as { type?: unknown; message?: { content?: unknown }; [key: string]: unknown };
  if (record.type === 'result') {
    const success = record.subtype === 'success' && record.is_error !== true;
    const text =
      typeof record.result === 'string' ? record.result : success ? 'Done.' : 'The agent reported an error.';
    return [
      {
        kind: 'result',
        result: {
          type: 'result',
          subtype: success ? 'success' : 'error',
          is_error: !success,
          result: text,
          duration_ms: typeof record.duration_ms === 'number' ? record.duration_ms : 0,
          num_turns: typeof record.num_turns === 'number' ? record.num_turns : 0,
        },
      },
    ];
  }
  if (record.type !== 'assistant' && record.type !== 'user') return [];
  const raw = record.message?.content;
  if (!Array.isArray(raw)) return [];
  const content = raw.flatMap((block: unknown) => {
    const parsed = ContentBlockSchema.safeParse(block);
    // A person's text never arrives from the agent; only its tool results do.
    if (!parsed.success || (record.type === 'user' && parsed.data.type !== 'tool_result')) return [];
    return [parsed.data];
  });
  if (content.length === 0) return [];
  const actions: StreamAction[] = [{ kind: 'assistant', content }];
  for (const block of content) {
    if (block.type === 'tool_use' && block.name === 'TodoWrite') {
      const tasks = todosToTasks(block.input);
      if (tasks) actions.push({ kind: 'tasks', tasks });
    }
  }
  return actions;
}
