import type { ContentBlock, Task } from '../../src-shared/sessions.js';
import { noticeText, num, parseJsonObject } from '../agents/agent-events.js';
import { resultMessage } from '../agents/types.js';
import {
  noteTime,
  plainNotice,
  pricedRun,
  type RunTokens,
  obj,
  str,
  type HistoryEvent,
  type HistoryFacts,
  type HistoryParser,
  type Line,
} from './history-events.js';

/** Lines and events that repeat what response items say, or hold only the CLI's settings. */
const QUIET_TYPES = new Set(['world_state', 'token_usage_record', 'compacted']);
const QUIET_EVENTS = new Set([
  'task_started',
  'thread_settings_applied',
  'agent_message',
  'agent_reasoning',
  'user_message',
  'exec_command_end',
  'patch_apply_end',
  'mcp_tool_call_end',
]);
const PLAN_STATUSES = new Set(['pending', 'in_progress', 'completed']);

function texts(content: unknown, type: string): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => obj(c))
    .filter((c) => c?.type === type && typeof c.text === 'string')
    .map((c) => c!.text as string)
    .join('\n');
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { input: text };
  }
}

/** `update_plan`'s steps as the spec's tasks, or null when the input is not a plan. */
function planTasks(input: unknown): Task[] | null {
  const plan = obj(input)?.plan;
  if (!Array.isArray(plan)) return null;
  return plan.flatMap((step, i) => {
    const s = obj(step);
    const title = str(s?.step);
    const status = str(s?.status) ?? 'pending';
    return title
      ? [{ id: String(i + 1), title, status: PLAN_STATUSES.has(status) ? status : 'pending' } as Task]
      : [];
  });
}

/**
 * Codex's rollout file, `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`: `session_meta`
 * (thread id, cwd, git branch), `turn_context` (model), `response_item`s (the Responses API items
 * the model saw: reasoning, messages, tool calls and their outputs, paired by `call_id`), and
 * `event_msg`s (the person's prompts, token counts, the end of each turn). A turn is a run:
 * `token_count` holds the thread's running totals, so a run's usage is the difference. Codex
 * records no cost: the price table prices each run. Tasks follow `update_plan` calls whose output is not an error.
 */
export function createCodexHistoryParser(state?: string): HistoryParser {
  const saved = (state ? JSON.parse(state) : {}) as Partial<CodexState>;
  const facts: HistoryFacts = saved.facts ?? { failed: false };
  let total: RunTokens = saved.total ?? {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  let atRunStart = saved.atRunStart ?? total;
  /** update_plan calls waiting for their output: their steps, applied once the call succeeded. */
  const plans = new Map<string, Task[]>(saved.plans ?? []);

  function toolUse(id: string, name: string, input: unknown): HistoryEvent[] {
    const tasks = name === 'update_plan' ? planTasks(input) : null;
    if (tasks) plans.set(id, tasks);
    return [{ kind: 'assistant', content: [{ type: 'tool_use', id, name, input }] }];
  }

  function toolResult(id: string, output: unknown, isError = false): HistoryEvent[] {
    const content =
      typeof output === 'string'
        ? output
        : Array.isArray(output)
          ? texts(output, 'input_text')
          : JSON.stringify(output ?? '');
    const block: ContentBlock = {
      type: 'tool_result',
      tool_use_id: id,
      content,
      ...(isError ? { is_error: true } : {}),
    };
    const events: HistoryEvent[] = [{ kind: 'assistant', content: [block] }];
    const tasks = plans.get(id);
    plans.delete(id);
    if (tasks && !isError) events.push({ kind: 'tasks', tasks });
    return events;
  }

  function responseItem(item: Line): HistoryEvent[] | null {
    const id = str(item.call_id) ?? str(item.id) ?? '';
    switch (item.type) {
      case 'message': {
        // The person's prompts come from event_msg; user and developer items here are context.
        if (item.role !== 'assistant') return [];
        const text = texts(item.content, 'output_text');
        return text ? [{ kind: 'assistant', content: [{ type: 'text', text }] }] : [];
      }
      case 'reasoning': {
        const thinking = texts(item.summary, 'summary_text') || texts(item.content, 'reasoning_text');
        return thinking ? [{ kind: 'assistant', content: [{ type: 'thinking', thinking }] }] : [];
      }
      case 'function_call':
        return toolUse(id, str(item.name) ?? 'function', parseArguments(item.arguments));
      case 'custom_tool_call':
        return toolUse(id, str(item.name) ?? 'tool', { input: item.input });
      case 'local_shell_call':
        return toolUse(id, 'shell', item.action ?? {});
      case 'tool_search_call':
        return toolUse(id, 'tool_search', item.arguments ?? item.query ?? {});
      case 'web_search_call': {
        const events = toolUse(id, 'web_search', item.action ?? {});
        return [...events, ...toolResult(id, str(item.status) ?? 'completed', item.status === 'failed')];
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output':
      case 'tool_search_output': {
        const output = obj(item.output);
        const isError = output?.success === false;
        return toolResult(
          id,
          output ? (output.content ?? output) : (item.output ?? item.tools ?? ''),
          isError,
        );
      }
      default:
        return null;
    }
  }

  function eventMsg(event: Line, text: string): HistoryEvent[] {
    const type = str(event.type) ?? '';
    if (type === 'item_completed') {
      const item = obj(event.item);
      if (item?.type !== 'UserMessage') return [];
      const prompt = texts(item.content, 'text').trim();
      return prompt ? [{ kind: 'prompt', text: prompt }] : [];
    }
    if (type === 'token_count') {
      const usage = obj(obj(event.info)?.total_token_usage);
      if (usage) {
        const cached = num(usage.cached_input_tokens);
        total = {
          inputTokens: Math.max(0, num(usage.input_tokens) - cached),
          outputTokens: num(usage.output_tokens),
          cacheReadTokens: cached,
          cacheWriteTokens: num(usage.cache_write_input_tokens),
        };
      }
      return [];
    }
    if (type === 'task_complete' || type === 'turn_aborted') {
      const error = obj(event.error);
      const failed = error !== undefined || type === 'turn_aborted';
      facts.failed = failed;
      const message =
        str(error?.message) ?? str(event.last_agent_message) ?? (failed ? 'The turn was aborted.' : 'Done.');
      const usage = {
        inputTokens: total.inputTokens - atRunStart.inputTokens,
        outputTokens: total.outputTokens - atRunStart.outputTokens,
        cacheReadTokens: total.cacheReadTokens - atRunStart.cacheReadTokens,
        cacheWriteTokens: total.cacheWriteTokens - atRunStart.cacheWriteTokens,
      };
      atRunStart = total;
      const events: HistoryEvent[] = [];
      if (failed) events.push({ kind: 'notice', level: 'error', text: noticeText(message) });
      events.push(pricedRun(facts.model, usage), {
        kind: 'result',
        result: resultMessage(!failed, message, num(event.duration_ms), 0),
      });
      return events;
    }
    if (type === 'error' || type === 'stream_error')
      return [{ kind: 'notice', level: 'error', text: noticeText(str(event.message) ?? text.trim()) }];
    if (QUIET_EVENTS.has(type)) return [];
    return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
  }

  return {
    facts,
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainNotice(text);
      noteTime(facts, line.timestamp);
      const payload = obj(line.payload) ?? {};
      switch (line.type) {
        case 'session_meta':
          facts.conversationId = str(payload.id) ?? str(payload.session_id) ?? facts.conversationId;
          facts.cwd = str(payload.cwd) ?? facts.cwd;
          facts.branch = str(obj(payload.git)?.branch) ?? facts.branch;
          return [];
        case 'turn_context':
          facts.model = str(payload.model) ?? facts.model;
          facts.cwd = str(payload.cwd) ?? facts.cwd;
          return [];
        case 'response_item':
          return responseItem(payload) ?? [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
        case 'event_msg':
          return eventMsg(payload, text);
        default:
          if (typeof line.type === 'string' && QUIET_TYPES.has(line.type)) return [];
          return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
      }
    },
    flush() {
      return [];
    },
    state() {
      const state: CodexState = { facts, total, atRunStart, plans: [...plans] };
      return JSON.stringify(state);
    },
  };
}

interface CodexState {
  facts: HistoryFacts;
  total: RunTokens;
  atRunStart: RunTokens;
  plans: [string, Task[]][];
}
