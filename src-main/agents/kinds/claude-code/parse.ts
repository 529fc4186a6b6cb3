import { tokenCost } from '../../../../src-shared/model-prices.js';
import { ContentBlockSchema, type ContentBlock } from '../../../../src-shared/sessions.js';
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
import { ClaudeTaskList } from './tasks.js';

type Line = Record<string, unknown>;

/** System lines that only repeat what other lines say (or say nothing a reader needs). */
const QUIET_SYSTEM = new Set([
  'thinking_tokens',
  'task_started',
  'task_progress',
  'task_updated',
  'task_notification',
  'hook_started',
  'hook_progress',
  'hook_response',
  'status',
  'session_state_changed',
  'background_tasks_changed',
]);

/** Line types that carry nothing for the transcript (partial chunks repeat the full messages). */
const QUIET_TYPES = new Set(['stream_event', 'rate_limit_event', 'keep_alive', 'tool_use_summary']);

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * This run's usage. `model_usage_since_last_result` counts this run with its sub-agents, per
 * model; `usage` leaves sub-agents out, and `total_cost_usd` and `modelUsage` count the whole
 * resumed conversation, so they serve only when the first is missing (older versions).
 */
function usageOf(line: Line): AgentUsage {
  const sinceLast = line.model_usage_since_last_result;
  if (typeof sinceLast === 'object' && sinceLast !== null) {
    const total: Required<AgentUsage> = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0,
    };
    for (const model of Object.values(sinceLast as Record<string, Record<string, unknown>>)) {
      total.inputTokens += num(model.inputTokens);
      total.outputTokens += num(model.outputTokens);
      total.cacheReadTokens += num(model.cacheReadInputTokens);
      total.cacheWriteTokens += num(model.cacheCreationInputTokens);
      total.costUsd += num(model.costUSD);
    }
    return total;
  }
  const usage = (line.usage ?? {}) as Record<string, unknown>;
  const result: AgentUsage = {
    inputTokens: num(usage.input_tokens),
    outputTokens: num(usage.output_tokens),
    cacheReadTokens: num(usage.cache_read_input_tokens),
    cacheWriteTokens: num(usage.cache_creation_input_tokens),
  };
  if (typeof line.total_cost_usd === 'number') result.costUsd = line.total_cost_usd;
  return result;
}

/**
 * The run's usage so far, from the assistant lines: each carries its API response's usage as
 * it stood when the response started, repeated on every line of that response. What a run
 * stopped before its `result` line used; priced from the price table, as no cost is printed.
 */
class RunningUsage {
  private readonly responses = new Map<string, { model: string | undefined; usage: AgentUsage }>();

  /** The run's usage with this line counted, or null when it adds nothing new. */
  add(line: Line): AgentUsage | null {
    const message = line.message as { id?: unknown; model?: unknown; usage?: unknown } | undefined;
    const id = str(message?.id);
    const usage = message?.usage as Record<string, unknown> | undefined;
    if (!id || !usage || this.responses.has(id)) return null;
    this.responses.set(id, {
      model: str(message?.model),
      usage: {
        inputTokens: num(usage.input_tokens),
        outputTokens: num(usage.output_tokens),
        cacheReadTokens: num(usage.cache_read_input_tokens),
        cacheWriteTokens: num(usage.cache_creation_input_tokens),
      },
    });
    const total: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    let cost: number | null = 0;
    for (const { model, usage: one } of this.responses.values()) {
      total.inputTokens += one.inputTokens;
      total.outputTokens += one.outputTokens;
      total.cacheReadTokens += one.cacheReadTokens;
      total.cacheWriteTokens += one.cacheWriteTokens;
      const priced = tokenCost(model, one);
      cost = cost === null || priced === null ? null : cost + priced;
    }
    if (cost !== null) total.costUsd = cost;
    return total;
  }
}

function resultEvents(line: Line): AgentEvent[] {
  const subtype = str(line.subtype) ?? 'error';
  const success = subtype === 'success' && line.is_error !== true;
  const errors = Array.isArray(line.errors) ? line.errors.filter((e) => typeof e === 'string') : [];
  const text =
    str(line.result) ??
    (errors.length > 0 ? errors.join('\n') : success ? 'Done.' : 'The agent reported an error.');
  const result = resultMessage(success, text, num(line.duration_ms), num(line.num_turns));
  const events: AgentEvent[] = [{ kind: 'usage', usage: usageOf(line) }];
  if (success) events.push({ kind: 'result', result });
  else {
    // An API error ends with subtype "success" and is_error; its reason is the terminal reason.
    const errorSubtype = subtype !== 'success' ? subtype : (str(line.terminal_reason) ?? 'error');
    events.push({ kind: 'result', result, errorSubtype });
  }
  return events;
}

function retryNotice(line: Line): AgentEvent {
  const status =
    line.error_status === null || line.error_status === undefined ? '' : ` ${String(line.error_status)}`;
  const seconds = Math.round(num(line.retry_delay_ms) / 100) / 10;
  return {
    kind: 'notice',
    level: 'error',
    text: `API error${status} (${str(line.error) ?? 'unknown'}); retry ${num(line.attempt)} of ${num(line.max_retries)} in ${seconds} s`,
  };
}

/**
 * Claude Code's `-p --output-format stream-json --verbose` output. Each assistant line holds one
 * content block; tool results arrive as `user` lines and belong to the agent's side. Lines with a
 * `parent_tool_use_id` come from a sub-agent and are marked with it.
 */
export function createClaudeCodeParser(): AgentParser {
  let conversationId: string | undefined;
  const tasks = new ClaudeTaskList();
  const open = new OpenToolCalls();
  const running = new RunningUsage();
  /** Once the result line has given the run's own usage, later lines do not replace it. */
  let resulted = false;

  function conversation(line: Line): AgentEvent[] {
    const id = str(line.session_id);
    if (!id || id === conversationId) return [];
    conversationId = id;
    return [{ kind: 'conversation', id }];
  }

  /** Server-side tool calls (web search, web fetch) in the shapes of ordinary ones. */
  function normalised(block: unknown): unknown {
    const b = block as { type?: unknown; tool_use_id?: unknown; content?: unknown } | null;
    if (b?.type === 'server_tool_use') return { ...b, type: 'tool_use' };
    if (typeof b?.type === 'string' && b.type.endsWith('_tool_result') && typeof b.tool_use_id === 'string')
      return {
        ...b,
        type: 'tool_result',
        content: Array.isArray(b.content) ? b.content : JSON.stringify(b.content),
      };
    return block;
  }

  /** A line's content blocks that `keep` accepts; blocks of unknown types come back as notices. */
  function blocksOf(line: Line, keep: (block: ContentBlock) => boolean): [ContentBlock[], AgentEvent[]] {
    const raw = (line.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(raw)) return [[], []];
    const blocks: ContentBlock[] = [];
    const notices: AgentEvent[] = [];
    for (const block of raw) {
      const parsed = ContentBlockSchema.safeParse(normalised(block));
      if (parsed.success) {
        if (keep(parsed.data)) blocks.push(parsed.data);
        continue;
      }
      const type = (block as { type?: unknown } | null)?.type;
      // Redacted thinking is encrypted: there is nothing to show.
      if (type !== 'redacted_thinking' && line.type === 'assistant')
        notices.push({
          kind: 'notice',
          level: 'info',
          text: noticeText(`Unshown content: ${JSON.stringify(block)}`),
        });
    }
    return [blocks, notices];
  }

  function usageEvents(line: Line): AgentEvent[] {
    if (resulted || line.type !== 'assistant') return [];
    const usage = running.add(line);
    return usage ? [{ kind: 'usage', usage }] : [];
  }

  /**
   * Text the CLI writes in the model's place (model `<synthetic>`): an API error such as
   * "Invalid API key", or its own remark. It is shown as the CLI's, an error when it is one.
   */
  function syntheticEvents(line: Line): AgentEvent[] | null {
    const message = line.message as { model?: unknown; content?: unknown } | undefined;
    if (line.type !== 'assistant' || message?.model !== '<synthetic>' || !Array.isArray(message.content))
      return null;
    const level = line.is_api_error_message === true || str(line.error) ? 'error' : 'info';
    return message.content.flatMap((block: { type?: unknown; text?: unknown }): AgentEvent[] => {
      const text = block.type === 'text' ? str(block.text) : undefined;
      return text ? [{ kind: 'notice', level, text: noticeText(text) }] : [];
    });
  }

  function contentEvents(line: Line): AgentEvent[] {
    const synthetic = syntheticEvents(line);
    if (synthetic) return synthetic;
    const parent = str(line.parent_tool_use_id);
    // A person's (or a sub-agent's prompt) text is not the agent's; only tool results are.
    const [content, notices] = blocksOf(line, (b) => line.type === 'assistant' || b.type === 'tool_result');
    if (content.length === 0) return notices;
    const events: AgentEvent[] = [
      parent ? { kind: 'assistant', content, parentToolUseId: parent } : { kind: 'assistant', content },
      ...notices,
    ];
    for (const block of content) {
      let changed = null;
      if (block.type === 'tool_use') {
        open.opened(block.id, parent);
        tasks.toolUse(block.id, block.name, block.input);
      } else if (block.type === 'tool_result') {
        open.closed(block.tool_use_id);
        changed = tasks.toolResult(
          block.tool_use_id,
          block.content,
          line.tool_use_result,
          block.is_error === true,
        );
      }
      if (changed) events.push({ kind: 'tasks', tasks: changed });
    }
    return events;
  }

  function systemEvents(line: Line): AgentEvent[] {
    const subtype = str(line.subtype) ?? '';
    if (subtype === 'init' || QUIET_SYSTEM.has(subtype)) return [];
    if (subtype === 'api_retry') return [retryNotice(line)];
    const detail = str(line.message) ?? str(line.content) ?? str(line.error) ?? '';
    return [{ kind: 'notice', level: 'info', text: noticeText(`${subtype}${detail ? `: ${detail}` : ''}`) }];
  }

  return {
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainLineNotice(text);
      const events = conversation(line);
      switch (line.type) {
        case 'system':
          return [...events, ...systemEvents(line)];
        case 'assistant':
        case 'user':
          return [...events, ...contentEvents(line), ...usageEvents(line)];
        case 'result':
          resulted = true;
          return [...events, ...resultEvents(line)];
        default:
          if (typeof line.type === 'string' && QUIET_TYPES.has(line.type)) return events;
          return [
            ...events,
            {
              kind: 'notice',
              level: line.type === 'error' ? 'error' : 'info',
              text: noticeText(text.trim()),
            },
          ];
      }
    },
    end() {
      const events = open.closeAll();
      const closed = closeOpenTasks(tasks.current);
      if (closed) events.push({ kind: 'tasks', tasks: tasks.replace(closed) });
      return events;
    },
  };
}
