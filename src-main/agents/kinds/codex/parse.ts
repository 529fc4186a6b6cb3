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
import { todoTasks, TOOL_ITEMS, toolResultOf, toolUseOf, type CodexItem } from './items.js';

export interface CodexParserOptions {
  /**
   * The conversation's token totals before this run. `turn.completed` reports the whole
   * thread's totals, so a resumed run's own usage is what it reports minus these; a session
   * that only ever resumes one thread passes the sum of its earlier runs' usage.
   */
  usageBefore?: AgentUsage;
}

function itemOf(line: Record<string, unknown>): CodexItem | null {
  const item = line.item as Partial<CodexItem> | undefined;
  return item && typeof item.id === 'string' && typeof item.type === 'string' ? (item as CodexItem) : null;
}

/** Codex's token counts (a thread's totals) as usage. */
export function threadUsage(usage: Record<string, unknown>): AgentUsage {
  const cached = num(usage.cached_input_tokens);
  return {
    // Codex counts cached tokens inside input_tokens; here input means "not read from the cache".
    inputTokens: Math.max(0, num(usage.input_tokens) - cached),
    outputTokens: num(usage.output_tokens),
    cacheReadTokens: cached,
    cacheWriteTokens: num(usage.cache_write_input_tokens),
  };
}

function minus(total: AgentUsage, before: AgentUsage | undefined): AgentUsage {
  if (!before) return total;
  const run = {
    inputTokens: total.inputTokens - before.inputTokens,
    outputTokens: total.outputTokens - before.outputTokens,
    cacheReadTokens: total.cacheReadTokens - before.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens - before.cacheWriteTokens,
  };
  // Totals lower than before mean another thread (the resume did not take): count it whole.
  return Object.values(run).some((n) => n < 0) ? total : run;
}

/**
 * `codex exec --json` output. Items arrive as started/updated/completed: messages and
 * reasoning are taken once completed (an update only repeats them so far), tool items become a
 * tool_use when they start and its tool_result when they complete, and the to-do list becomes
 * the session's tasks. `error` lines (retries included) become notices; `turn.completed` ends
 * the run with success, `turn.failed` with an error. Codex reports no duration, so the result's
 * `duration_ms` is 0 for the caller to fill in; `num_turns` counts stretches of work between
 * tool results, one per model response.
 */
export function createCodexParser(options: CodexParserOptions = {}): AgentParser {
  const open = new OpenToolCalls();
  let tasks: Task[] = [];
  let lastMessage = '';
  /** Messages seen started or updated but not completed, by item id, for the end of the run. */
  const unfinished = new Map<string, string>();
  const seenTools = new Set<string>();
  let turns = 0;
  let speaking = false;

  function turnStep(): void {
    if (!speaking) turns += 1;
    speaking = true;
  }

  function itemEvents(event: string, item: CodexItem): AgentEvent[] {
    if (item.type === 'todo_list') {
      const next = todoTasks(item);
      if (JSON.stringify(next) === JSON.stringify(tasks)) return [];
      tasks = next;
      return [{ kind: 'tasks', tasks }];
    }
    if (item.type === 'error')
      return [{ kind: 'notice', level: 'error', text: noticeText(String(item.message ?? 'Unknown error')) }];
    if (TOOL_ITEMS.has(item.type)) {
      const events: AgentEvent[] = [];
      // A call is shown once, when first seen; some items arrive only completed.
      if (!seenTools.has(item.id)) {
        seenTools.add(item.id);
        turnStep();
        open.opened(item.id);
        events.push({ kind: 'assistant', content: [toolUseOf(item)] });
      }
      if (event === 'item.completed') {
        open.closed(item.id);
        speaking = false;
        events.push({ kind: 'assistant', content: [toolResultOf(item)] });
      }
      return events;
    }
    if (item.type === 'agent_message' || item.type === 'reasoning' || item.type === 'plan') {
      const text = typeof item.text === 'string' ? item.text : '';
      if (event !== 'item.completed') {
        if (item.type === 'agent_message') unfinished.set(item.id, text);
        return [];
      }
      unfinished.delete(item.id);
      if (!text) return [];
      turnStep();
      if (item.type === 'reasoning')
        return [{ kind: 'assistant', content: [{ type: 'thinking', thinking: text }] }];
      lastMessage = text;
      return [{ kind: 'assistant', content: [{ type: 'text', text }] }];
    }
    if (event !== 'item.completed') return [];
    return [{ kind: 'notice', level: 'info', text: noticeText(`${item.type}: ${JSON.stringify(item)}`) }];
  }

  return {
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainLineNotice(text);
      switch (line.type) {
        case 'thread.started':
          return typeof line.thread_id === 'string' ? [{ kind: 'conversation', id: line.thread_id }] : [];
        case 'turn.started':
        case 'item.plan.delta':
          return [];
        case 'item.started':
        case 'item.updated':
        case 'item.completed': {
          const item = itemOf(line);
          return item ? itemEvents(line.type, item) : plainLineNotice(text);
        }
        case 'turn.completed':
          return [
            {
              kind: 'usage',
              usage: minus(threadUsage((line.usage ?? {}) as Record<string, unknown>), options.usageBefore),
            },
            { kind: 'result', result: resultMessage(true, lastMessage || 'Done.', 0, turns) },
          ];
        case 'turn.failed': {
          const message = (line.error as { message?: unknown } | undefined)?.message;
          const reason = typeof message === 'string' && message ? message : 'The turn failed.';
          return [
            { kind: 'result', result: resultMessage(false, reason, 0, turns), errorSubtype: 'turn_failed' },
          ];
        }
        case 'error':
          return [{ kind: 'notice', level: 'error', text: noticeText(String(line.message ?? text.trim())) }];
        default:
          return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
      }
    },
    end() {
      const events: AgentEvent[] = [];
      for (const partial of unfinished.values())
        if (partial) events.push({ kind: 'assistant', content: [{ type: 'text', text: partial }] });
      unfinished.clear();
      events.push(...open.closeAll());
      const closed = closeOpenTasks(tasks);
      if (closed) {
        tasks = closed;
        events.push({ kind: 'tasks', tasks });
      }
      return events;
    },
  };
}
