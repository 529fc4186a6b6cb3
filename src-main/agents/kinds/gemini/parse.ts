import type { Task } from '../../../../src-shared/sessions.js';
import {
  closeOpenTasks,
  noticeText,
  num,
  OpenToolCalls,
  parseJsonObject,
  plainLineNotice,
  type AgentEvent,
  type AgentParser,
  type AgentUsage,
} from '../../agent-events.js';
import { resultMessage } from '../../types.js';

/**
 * `write_todos` items as tasks, ids by position. Gemini also knows `cancelled` and `blocked`,
 * which the session's statuses do not: a cancelled step is closed (`completed`) and a blocked
 * one is open (`pending`), each with its real state in the title so nobody reads it as done.
 */
export function writeTodosTasks(input: unknown): Task[] | null {
  const todos = (input as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return null;
  return todos.flatMap((todo: unknown, i): Task[] => {
    const t = todo as { description?: unknown; status?: unknown };
    if (typeof t.description !== 'string') return [];
    const id = `todo-${i + 1}`;
    switch (t.status) {
      case 'in_progress':
      case 'completed':
        return [{ id, title: t.description, status: t.status }];
      case 'cancelled':
        return [{ id, title: `${t.description} (cancelled)`, status: 'completed' }];
      case 'blocked':
        return [{ id, title: `${t.description} (blocked)`, status: 'pending' }];
      default:
        return [{ id, title: t.description, status: 'pending' }];
    }
  });
}

/** "Attempt 2 failed with status 503. Retrying with backoff... Error: …" and its variants. */
const RETRY_LINE = /^Attempt \d+ failed\b.*\bRetrying\b/u;

/**
 * Gemini CLI says that it retries a request (a stream cut short, a 5xx) only on stderr, while
 * stdout stays silent for minutes: each such line is a notice, as it is written.
 */
export function geminiStderrEvents(line: string): AgentEvent[] {
  const text = line.trim();
  return RETRY_LINE.test(text) ? [{ kind: 'notice', level: 'error', text: noticeText(text) }] : [];
}

function usageOf(stats: Record<string, unknown>): AgentUsage {
  // `input_tokens` includes cached ones; `input` is what was not read from the cache.
  return {
    inputTokens: num(stats.input),
    outputTokens: num(stats.output_tokens),
    cacheReadTokens: num(stats.cached),
    cacheWriteTokens: 0,
  };
}

/**
 * Gemini CLI's `--output-format stream-json`: `init` (its session id), `message` deltas (joined
 * into one text block per stretch of speech), `tool_use`/`tool_result` paired by `tool_id`,
 * `error` lines (notices) and a final `result` whose status decides success.
 */
export function createGeminiParser(): AgentParser {
  const open = new OpenToolCalls();
  let tasks: Task[] = [];
  /** write_todos calls waiting for their results: their parameters, by tool id. */
  const todoCalls = new Map<string, unknown>();
  let speech = '';
  let lastSpeech = '';
  /** A warning that ended the run early (a loop detected, say) explains a result with no text. */
  let lastWarning = '';
  let turns = 0;
  let speaking = false;

  function turnStep(): void {
    if (!speaking) turns += 1;
    speaking = true;
  }

  /** The text spoken since the last tool call or result, as one block. */
  function flush(): AgentEvent[] {
    if (!speech) return [];
    const text = speech;
    lastSpeech = text;
    speech = '';
    return [{ kind: 'assistant', content: [{ type: 'text', text }] }];
  }

  function toolUse(line: Record<string, unknown>): AgentEvent[] {
    const id = typeof line.tool_id === 'string' ? line.tool_id : '';
    const name = typeof line.tool_name === 'string' ? line.tool_name : 'tool';
    if (!id) return [{ kind: 'notice', level: 'info', text: noticeText(JSON.stringify(line)) }];
    turnStep();
    open.opened(id);
    const events: AgentEvent[] = [
      ...flush(),
      { kind: 'assistant', content: [{ type: 'tool_use', id, name, input: line.parameters ?? {} }] },
    ];
    if (name === 'write_todos') todoCalls.set(id, line.parameters);
    return events;
  }

  function toolResult(line: Record<string, unknown>): AgentEvent[] {
    const id = typeof line.tool_id === 'string' ? line.tool_id : '';
    if (!id) return [{ kind: 'notice', level: 'info', text: noticeText(JSON.stringify(line)) }];
    open.closed(id);
    speaking = false;
    const failed = line.status === 'error';
    const error = (line.error as { message?: unknown } | undefined)?.message;
    const output = typeof line.output === 'string' ? line.output : '';
    const content = failed && typeof error === 'string' ? error : output;
    const events: AgentEvent[] = [
      ...flush(),
      { kind: 'assistant', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: failed }] },
    ];
    // A to-do list counts once the CLI has accepted it: a refused one (a status it does not
    // know) leaves the tasks as they were.
    const todos = todoCalls.get(id);
    todoCalls.delete(id);
    const next = failed || todos === undefined ? null : writeTodosTasks(todos);
    if (next) {
      tasks = next;
      events.push({ kind: 'tasks', tasks });
    }
    return events;
  }

  function result(line: Record<string, unknown>): AgentEvent[] {
    const events = flush();
    const stats = (line.stats ?? {}) as Record<string, unknown>;
    events.push({ kind: 'usage', usage: usageOf(stats) });
    const duration = num(stats.duration_ms);
    if (line.status === 'success') {
      const text = lastSpeech || lastWarning || 'Done.';
      events.push({ kind: 'result', result: resultMessage(true, text, duration, turns) });
      return events;
    }
    const error = (line.error ?? {}) as { type?: unknown; message?: unknown };
    const reason =
      typeof error.message === 'string' && error.message ? error.message : 'The agent reported an error.';
    events.push({
      kind: 'result',
      result: resultMessage(false, reason, duration, turns),
      errorSubtype: typeof error.type === 'string' ? error.type : 'error',
    });
    return events;
  }

  return {
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainLineNotice(text);
      switch (line.type) {
        case 'init':
          return typeof line.session_id === 'string' ? [{ kind: 'conversation', id: line.session_id }] : [];
        case 'message': {
          // The person's own prompt is already in the session.
          if (line.role !== 'assistant' || typeof line.content !== 'string') return [];
          turnStep();
          if (line.delta === true) {
            speech += line.content;
            return [];
          }
          speech += line.content;
          return flush();
        }
        case 'tool_use':
          return toolUse(line);
        case 'tool_result':
          return toolResult(line);
        case 'error': {
          const message = typeof line.message === 'string' ? line.message : text.trim();
          const warning = line.severity === 'warning';
          if (warning) lastWarning = message;
          return [
            ...flush(),
            {
              kind: 'notice',
              level: warning ? 'info' : 'error',
              text: noticeText(warning ? `Warning: ${message}` : message),
            },
          ];
        }
        case 'result':
          return result(line);
        default:
          return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
      }
    },
    end() {
      const events = [...flush(), ...open.closeAll()];
      const closed = closeOpenTasks(tasks);
      if (closed) {
        tasks = closed;
        events.push({ kind: 'tasks', tasks });
      }
      return events;
    },
  };
}
