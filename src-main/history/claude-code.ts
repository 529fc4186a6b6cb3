import { tokenCost } from '../../src-shared/model-prices.js';
import { ContentBlockSchema, type ContentBlock, type Task } from '../../src-shared/sessions.js';
import { noticeText, num, parseJsonObject, type AgentUsage } from '../agents/agent-events.js';
import { ClaudeTaskList, type WaitingCall } from '../agents/kinds/claude-code/tasks.js';
import { resultMessage } from '../agents/types.js';
import {
  emptyUsage,
  noteTime,
  obj,
  plainNotice,
  str,
  type HistoryEvent,
  type HistoryFacts,
  type HistoryParser,
  type Line,
  type RunTokens,
} from './history-events.js';

/**
 * Line types of Claude Code's session file that hold nothing for the transcript: the CLI's own
 * bookkeeping (queued prompts, context attachments, request records, cached prompt blobs).
 */
const QUIET_TYPES = new Set([
  'queue-operation',
  'attachment',
  'atis-latch',
  'api-request-shape',
  'api-request-blob',
  'api-request',
  'tools-used',
  'last-prompt',
  'mode',
  'file-history-snapshot',
  'progress',
]);

/**
 * Lines left out unread: the cached request blobs, a third of a long session's bytes, which
 * hold no time, place or title (only the session's id, which the lines before them carry).
 * Claude Code writes them with their type first; written otherwise, they are read and dropped.
 */
const UNREAD_PREFIXES = [Buffer.from('{"type":"api-request-blob",')];

/** Line types that carry the CLI's own title for the conversation. */
const TITLE_TYPES: Record<string, string> = {
  summary: 'summary',
  'custom-title': 'customTitle',
  'ai-title': 'aiTitle',
};

interface CostState {
  usage: Required<AgentUsage>;
}

function costStateUsage(line: Line): CostState {
  const usage = emptyUsage();
  for (const model of Object.values(obj(line.modelUsage) ?? {})) {
    const m = obj(model) ?? {};
    usage.inputTokens += num(m.inputTokens);
    usage.outputTokens += num(m.outputTokens);
    usage.cacheReadTokens += num(m.cacheReadInputTokens);
    usage.cacheWriteTokens += num(m.cacheCreationInputTokens);
  }
  usage.costUsd = num(line.totalCostUSD);
  return { usage };
}

/** The prompt text of a person's line, or undefined when it holds only tool results. */
function promptText(content: unknown): string | undefined {
  if (typeof content === 'string') return str(content.trim());
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .map((b) => obj(b))
    .filter((b) => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b!.text as string);
  return str(texts.join('\n').trim());
}

/**
 * Claude Code's session file, `projects/<project>/<session>.jsonl` (or a sub-agent's file beside
 * it, whose content is marked with `parentToolUseId`, the call that started the sub-agent).
 * Assistant and user lines hold the Messages API content blocks of the stream-json output. A run
 * of the CLI ends with a `cost-state` line holding the conversation's running totals and cost, so
 * a run's usage is the difference from the previous one. Tasks follow TodoWrite only once its
 * call succeeded, and TaskCreate/TaskUpdate as the live parser does.
 */
export function createClaudeCodeHistoryParser(parentToolUseId?: string, state?: string): HistoryParser {
  const saved = (state ? JSON.parse(state) : {}) as Partial<ClaudeState>;
  const facts: HistoryFacts = saved.facts ?? { failed: false };
  // State saved before task calls of every kind waited held only TodoWrite inputs.
  const legacyTodos = (saved.pendingTodo ?? []).map(([id, input]): [string, WaitingCall] => [
    id,
    { name: 'TodoWrite', input },
  ]);
  const tasks = new ClaudeTaskList(saved.tasks ?? [], saved.waiting ?? legacyTodos);
  let previous = saved.previous ?? emptyUsage();
  let runFailed = saved.runFailed ?? false;
  let runError = saved.runError ?? '';
  // The tokens of the messages since the last cost-state line, counted once per message (the
  // CLI writes a line per content block, each with the message's usage): a file without
  // cost-state lines (an interactive session, a run cut short) still says what it used.
  let unsettled = saved.unsettled ?? emptyTokens();
  let lastMessageId = saved.lastMessageId;

  const mark = (content: ContentBlock[]): HistoryEvent =>
    parentToolUseId ? { kind: 'assistant', content, parentToolUseId } : { kind: 'assistant', content };

  function blocks(line: Line): [ContentBlock[], HistoryEvent[]] {
    const raw = obj(line.message)?.content;
    if (!Array.isArray(raw)) return [[], []];
    const kept: ContentBlock[] = [];
    const notices: HistoryEvent[] = [];
    for (const block of raw) {
      const parsed = ContentBlockSchema.safeParse(block);
      if (parsed.success) {
        if (line.type === 'assistant' || parsed.data.type === 'tool_result') kept.push(parsed.data);
      } else if (obj(block)?.type !== 'redacted_thinking' && line.type === 'assistant') {
        notices.push({
          kind: 'notice',
          level: 'info',
          text: noticeText(`Unshown content: ${JSON.stringify(block)}`),
        });
      }
    }
    return [kept, notices];
  }

  function taskEvents(content: ContentBlock[], line: Line): HistoryEvent[] {
    const events: HistoryEvent[] = [];
    for (const block of content) {
      let changed = null;
      if (block.type === 'tool_use') tasks.toolUse(block.id, block.name, block.input);
      else if (block.type === 'tool_result')
        changed = tasks.toolResult(
          block.tool_use_id,
          block.content,
          line.toolUseResult,
          block.is_error === true,
        );
      if (changed) events.push({ kind: 'tasks', tasks: changed });
    }
    return events;
  }

  /** Adds a message's tokens, once, to those no cost-state line has counted yet. */
  function countTokens(message: Line): void {
    const id = str(message.id);
    const usage = obj(message.usage);
    if (parentToolUseId || !usage || (id !== undefined && id === lastMessageId)) return;
    lastMessageId = id;
    unsettled.inputTokens += num(usage.input_tokens);
    unsettled.outputTokens += num(usage.output_tokens);
    unsettled.cacheReadTokens += num(usage.cache_read_input_tokens);
    unsettled.cacheWriteTokens += num(usage.cache_creation_input_tokens);
  }

  /**
   * A run that wrote no cost-state line, ended by the next prompt or the file going quiet: its
   * tokens priced by the table, else its cost unknown. They count as the CLI's own totals would,
   * so that a cost-state line after them (a resumed conversation's) adds only what is new.
   */
  function endWithoutCostState(): HistoryEvent[] {
    const tokens = unsettled;
    if (tokens.inputTokens + tokens.outputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens === 0)
      return [];
    unsettled = emptyTokens();
    const costUsd = tokenCost(facts.model, tokens);
    previous = {
      inputTokens: previous.inputTokens + tokens.inputTokens,
      outputTokens: previous.outputTokens + tokens.outputTokens,
      cacheReadTokens: previous.cacheReadTokens + tokens.cacheReadTokens,
      cacheWriteTokens: previous.cacheWriteTokens + tokens.cacheWriteTokens,
      costUsd: previous.costUsd + (costUsd ?? 0),
    };
    facts.failed = runFailed;
    const result = resultMessage(!runFailed, runFailed ? runError : 'Done.', 0, 0);
    runFailed = false;
    runError = '';
    return [
      { kind: 'run', usage: tokens, costUsd, ...(facts.model ? { model: facts.model } : {}) },
      { kind: 'result', result },
    ];
  }

  function assistant(line: Line): HistoryEvent[] {
    const message = obj(line.message) ?? {};
    const model = str(message.model);
    if (model && model !== '<synthetic>') facts.model = model;
    countTokens(message);
    const [content, notices] = blocks(line);
    if (line.isApiErrorMessage === true) {
      // The CLI's own words for a failed request; the run ends in an error.
      runFailed = true;
      runError = content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') || 'API error';
      return [{ kind: 'notice', level: 'error', text: noticeText(runError) }];
    }
    if (content.length === 0) return notices;
    return [mark(content), ...notices, ...taskEvents(content, line)];
  }

  function user(line: Line): HistoryEvent[] {
    const message = obj(line.message) ?? {};
    const [results] = blocks(line);
    const events: HistoryEvent[] = [];
    // A sub-agent's prompt is the input of the call that started it, already shown there.
    const text =
      line.isMeta === true || line.isCompactSummary === true ? undefined : promptText(message.content);
    if (text && results.length === 0 && !parentToolUseId) {
      // A prompt starts a run: the one before it ended, whether or not it wrote its cost.
      events.push(...endWithoutCostState(), { kind: 'prompt', text });
    }
    if (results.length > 0) events.push(mark(results), ...taskEvents(results, line));
    return events;
  }

  /** A run ended: its usage is the difference between two cost states (CLI's own cost). */
  function runEnd(line: Line): HistoryEvent[] {
    const { usage: total } = costStateUsage(line);
    // The cost-state line counts every message since the last one.
    unsettled = emptyTokens();
    const usage = {
      inputTokens: Math.max(0, total.inputTokens - previous.inputTokens),
      outputTokens: Math.max(0, total.outputTokens - previous.outputTokens),
      cacheReadTokens: Math.max(0, total.cacheReadTokens - previous.cacheReadTokens),
      cacheWriteTokens: Math.max(0, total.cacheWriteTokens - previous.cacheWriteTokens),
    };
    // The CLI's own cost, unless it says it could not price a model it used, or gives none.
    const costUsd =
      line.hasUnknownModelCost === true || typeof line.totalCostUSD !== 'number'
        ? tokenCost(facts.model, usage)
        : Math.max(0, total.costUsd - previous.costUsd);
    previous = total;
    facts.failed = runFailed;
    const result = resultMessage(!runFailed, runFailed ? runError : 'Done.', 0, 0);
    runFailed = false;
    runError = '';
    return [
      { kind: 'run', usage, costUsd, ...(facts.model ? { model: facts.model } : {}) },
      { kind: 'result', result },
    ];
  }

  return {
    facts,
    unreadPrefixes: UNREAD_PREFIXES,
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainNotice(text);
      noteTime(facts, line.timestamp);
      facts.conversationId ??= str(line.sessionId);
      facts.cwd = str(line.cwd) ?? facts.cwd;
      facts.branch = str(line.gitBranch) ?? facts.branch;
      const type = str(line.type) ?? '';
      if (type in TITLE_TYPES) {
        facts.title = str(line[TITLE_TYPES[type]!]) ?? facts.title;
        return [];
      }
      switch (type) {
        case 'assistant':
          return assistant(line);
        case 'user':
          return user(line);
        case 'cost-state':
          return runEnd(line);
        case 'system': {
          const subtype = str(line.subtype) ?? '';
          const error = obj(line.error);
          const detail = str(error?.formatted) ?? str(line.content) ?? str(line.message) ?? '';
          return [
            {
              kind: 'notice',
              level: line.level === 'error' ? 'error' : 'info',
              text: noticeText(`${subtype}${detail ? `: ${detail}` : ''}`),
            },
          ];
        }
        default: {
          if (QUIET_TYPES.has(type)) {
            if (obj(line.attachment)?.type === 'max_turns_reached') {
              runFailed = true;
              runError = 'Reached the maximum number of turns.';
            }
            return [];
          }
          return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
        }
      }
    },
    flush() {
      return endWithoutCostState();
    },
    state() {
      const state: ClaudeState = {
        facts,
        tasks: tasks.current,
        waiting: tasks.waitingCalls(),
        previous,
        runFailed,
        runError,
        unsettled,
        ...(lastMessageId === undefined ? {} : { lastMessageId }),
      };
      return JSON.stringify(state);
    },
  };
}

interface ClaudeState {
  facts: HistoryFacts;
  tasks: Task[];
  waiting?: [string, WaitingCall][];
  pendingTodo?: [string, unknown][];
  previous: Required<AgentUsage>;
  runFailed: boolean;
  runError: string;
  /** Tokens of messages since the last cost-state line (absent in state saved before them). */
  unsettled?: RunTokens;
  lastMessageId?: string | undefined;
}

function emptyTokens(): Required<RunTokens> {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** A sub-agent's meta file beside its transcript: the call that started it. */
export function subAgentParent(metaJson: string): string | undefined {
  try {
    return str(obj(JSON.parse(metaJson))?.toolUseId);
  } catch {
    return undefined;
  }
}
