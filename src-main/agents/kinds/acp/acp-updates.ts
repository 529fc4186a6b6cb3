import type { SessionUpdate, Stream } from '@agentclientprotocol/sdk/unstable';
import { lineText } from '../../../../src-shared/plain-text.js';
import type { ContentBlock, Task } from '../../../../src-shared/sessions.js';
import {
  noticeText,
  num,
  UNFINISHED_TOOL_RESULT,
  type AgentEvent,
  type AgentUsage,
} from '../../agent-events.js';

/**
 * An ACP agent's `session/update` notifications as the session's events: its streamed text and
 * thinking joined as they were streamed, each tool call paired with its result, its plan as the
 * session's tasks, and what it used. The shapes are the protocol's (schema v1); an update of a
 * kind this version does not know becomes a notice (once a run), never an error.
 */

type Json = Record<string, unknown>;

/** A tool call's name as the transcript keeps it: a title agents may make as long as they like. */
const TOOL_NAME_MAX_CHARS = 200;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text of an ACP content block: text itself, a resource's text, or what the block is. */
export function contentText(block: unknown): string {
  if (!isObject(block)) return '';
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.text === 'string')
    return block.resource.text;
  if (block.type === 'resource_link' && typeof block.uri === 'string') return block.uri;
  if (typeof block.type === 'string') return `[${block.type}]`;
  return '';
}

/** The client's terminals, as a tool call's content names them (acp-terminals.ts). */
export interface TerminalsShown {
  referenced(terminalId: string): void;
  text(terminalId: string): string | undefined;
}

function terminalIds(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((item: unknown) =>
    isObject(item) && item.type === 'terminal' && typeof item.terminalId === 'string'
      ? [item.terminalId]
      : [],
  );
}

/** What a tool call's content says, as the text of its result; a terminal's, its command and output. */
function toolContentText(content: unknown, terminals: TerminalsShown | undefined): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((item: unknown) => {
      if (!isObject(item)) return '';
      if (item.type === 'content') return contentText(item.content);
      if (item.type === 'diff' && typeof item.path === 'string') {
        const before = typeof item.oldText === 'string' ? item.oldText : null;
        const after = typeof item.newText === 'string' ? item.newText : '';
        return before === null ? `Wrote ${item.path}:\n${after}` : `Edited ${item.path}:\n${after}`;
      }
      if (item.type === 'terminal' && typeof item.terminalId === 'string')
        return terminals?.text(item.terminalId) ?? `[terminal ${item.terminalId}]`;
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

/** The statuses of a plan's entries, as the session's task statuses (the same three words). */
const PLAN_STATUS = new Set(['pending', 'in_progress', 'completed']);

function planTasks(entries: unknown): Task[] {
  if (!Array.isArray(entries)) return [];
  const tasks: Task[] = [];
  entries.forEach((entry: unknown, i) => {
    if (!isObject(entry) || typeof entry.content !== 'string') return;
    const status =
      typeof entry.status === 'string' && PLAN_STATUS.has(entry.status) ? entry.status : 'pending';
    tasks.push({ id: `task-${i + 1}`, title: entry.content, status: status as Task['status'] });
  });
  return tasks;
}

interface OpenCall {
  name: string;
  input: unknown;
  content: unknown;
  rawOutput: unknown;
}

/** Updates that change nothing a transcript shows: the agent's commands, modes, options, title. */
const QUIET_UPDATES = new Set([
  'available_commands_update',
  'current_mode_update',
  'config_option_update',
  'session_info_update',
]);

export interface AcpTranscript {
  /** One `session/update`'s `update`. */
  update(update: unknown): AgentEvent[];
  /** The tool call a `session/request_permission` asks about (it may be its first mention). */
  permissionAsked(toolCall: unknown): AgentEvent[];
  /**
   * The turn's usage: what the prompt's answer reports besides its stop reason, else what the
   * updates reported (a turn stopped before its answer has none).
   */
  usage(response?: unknown): AgentUsage | null;
  /** A command the agent ran in a terminal of the client's that no tool call showed. */
  terminal(shown: {
    id: string;
    command: string[];
    cwd: string;
    text: string;
    failed: boolean;
  }): AgentEvent[];
  /** The turn is over: text still being streamed is written, open calls are closed. */
  end(): AgentEvent[];
}

export function createAcpTranscript(terminals?: TerminalsShown): AcpTranscript {
  let streaming: { kind: 'text' | 'thinking'; text: string } | null = null;
  const open = new Map<string, OpenCall>();
  const closed = new Set<string>();
  let cost: number | undefined;
  /** The kinds of update already said to be unknown: each is said once a run. */
  const unknownKinds = new Set<string>();
  /** Qwen Code's figures of each model call, in its chunks' `_meta.usage`: summed over the turn. */
  let perCall: AgentUsage | undefined;

  function addCallUsage(meta: unknown): void {
    if (!isObject(meta) || !isObject(meta.usage)) return;
    const call = meta.usage;
    perCall ??= { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    perCall.inputTokens += num(call.inputTokens) - num(call.cachedReadTokens);
    perCall.outputTokens += num(call.outputTokens);
    perCall.cacheReadTokens += num(call.cachedReadTokens);
  }

  /** Text and thinking arrive in chunks: one block each, written when something else comes. */
  function flush(): AgentEvent[] {
    if (!streaming) return [];
    const block: ContentBlock =
      streaming.kind === 'text'
        ? { type: 'text', text: streaming.text }
        : { type: 'thinking', thinking: streaming.text };
    streaming = null;
    return block.type === 'text' && block.text.trim() === '' ? [] : [{ kind: 'assistant', content: [block] }];
  }

  function chunk(kind: 'text' | 'thinking', content: unknown): AgentEvent[] {
    const text = contentText(content);
    const events = streaming && streaming.kind !== kind ? flush() : [];
    streaming ??= { kind, text: '' };
    streaming.text += text;
    return events;
  }

  function result(id: string, call: OpenCall, failed: boolean): AgentEvent {
    open.delete(id);
    closed.add(id);
    const text =
      toolContentText(call.content, terminals) || (typeof call.rawOutput === 'string' ? call.rawOutput : '');
    const block: ContentBlock = {
      type: 'tool_result',
      tool_use_id: id,
      content: text || (failed ? 'The tool call failed.' : 'Done.'),
    };
    if (failed) block.is_error = true;
    return { kind: 'assistant', content: [block] };
  }

  /**
   * A call is announced by its `tool_call`, but agents also announce one by asking permission
   * for it, or only by an update (Gemini CLI): whichever comes first opens it. A call already
   * closed is not opened again.
   */
  function toolCall(update: Json): AgentEvent[] {
    const id = typeof update.toolCallId === 'string' ? update.toolCallId : null;
    if (id === null)
      return [{ kind: 'notice', level: 'info', text: 'A tool call without an id was left out.' }];
    const events = flush();
    let call = open.get(id);
    if (!call && !closed.has(id)) {
      const name = [update.name, update.title, update.kind].find((v) => typeof v === 'string' && v) as
        string | undefined;
      call = {
        // A name is a line a person reads: nothing in it may hide or reorder what it says.
        name: (name === undefined ? '' : lineText(name, TOOL_NAME_MAX_CHARS)) || 'tool',
        input: update.rawInput ?? { title: update.title, kind: update.kind, locations: update.locations },
        content: update.content,
        rawOutput: update.rawOutput,
      };
      open.set(id, call);
      events.push({
        kind: 'assistant',
        content: [{ type: 'tool_use', id, name: call.name, input: call.input }],
      });
    } else if (!call) {
      // An update of a call already closed: its result is in the transcript.
      return events;
    }
    for (const terminalId of terminalIds(update.content)) terminals?.referenced(terminalId);
    if (update.content !== undefined && update.content !== null) call.content = update.content;
    if (update.rawOutput !== undefined) call.rawOutput = update.rawOutput;
    if (update.status === 'completed' || update.status === 'failed') {
      events.push(result(id, call, update.status === 'failed'));
    }
    return events;
  }

  return {
    update(update) {
      if (!isObject(update) || typeof update.sessionUpdate !== 'string') {
        if (unknownKinds.has('')) return [];
        unknownKinds.add('');
        return [
          { kind: 'notice', level: 'info', text: 'The agent sent an update this version cannot read.' },
        ];
      }
      switch (update.sessionUpdate) {
        case 'agent_message_chunk':
          addCallUsage(update._meta);
          return chunk('text', update.content);
        case 'agent_thought_chunk':
          return chunk('thinking', update.content);
        case 'user_message_chunk':
          // The prompt as the agent echoes it: the transcript has it already.
          return [];
        case 'tool_call':
        case 'tool_call_update':
          return toolCall(update);
        case 'plan':
          return [...flush(), { kind: 'tasks', tasks: planTasks(update.entries) }];
        case 'usage_update':
          if (isObject(update.cost) && update.cost.currency === 'USD') cost = num(update.cost.amount);
          return [];
        case 'notice': {
          const text = [update.title, update.description].filter((v) => typeof v === 'string').join(': ');
          const level = update.severity === 'error' ? 'error' : 'info';
          return [
            ...flush(),
            { kind: 'notice', level, text: noticeText(text || 'The agent sent a notice.') },
          ];
        }
        default:
          if (QUIET_UPDATES.has(update.sessionUpdate) || unknownKinds.has(update.sessionUpdate)) return [];
          unknownKinds.add(update.sessionUpdate);
          return [
            ...flush(),
            {
              kind: 'notice',
              level: 'info',
              text: `The agent sent an update of a kind Session Desk does not show (${noticeText(update.sessionUpdate)}).`,
            },
          ];
      }
    },

    permissionAsked(call) {
      return isObject(call) ? toolCall(call) : [];
    },

    usage(answer) {
      const response = isObject(answer) ? answer : {};
      // The protocol's draft `usage` on the answer, else Qwen Code's per call, else Gemini CLI's in `_meta`.
      const usage = isObject(response.usage) ? response.usage : null;
      const quota = isObject(response._meta) && isObject(response._meta.quota) ? response._meta.quota : null;
      const geminiCount = quota && isObject(quota.token_count) ? quota.token_count : null;
      let found: AgentUsage | null = null;
      if (usage) {
        found = {
          inputTokens: num(usage.inputTokens) - num(usage.cachedReadTokens),
          outputTokens: num(usage.outputTokens),
          cacheReadTokens: num(usage.cachedReadTokens),
          cacheWriteTokens: num(usage.cachedWriteTokens),
        };
      } else if (perCall) {
        found = { ...perCall };
      } else if (geminiCount) {
        found = {
          inputTokens: num(geminiCount.input_tokens),
          outputTokens: num(geminiCount.output_tokens),
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        };
      }
      if (found && cost !== undefined) found.costUsd = cost;
      if (!found && cost !== undefined) {
        found = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: cost };
      }
      return found;
    },

    terminal(shown) {
      const [program = '', ...args] = shown.command;
      const result: ContentBlock = { type: 'tool_result', tool_use_id: shown.id, content: shown.text };
      if (shown.failed) result.is_error = true;
      return [
        ...flush(),
        {
          kind: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: shown.id,
              name: 'terminal',
              input: { command: program, args, cwd: shown.cwd },
            },
          ],
        },
        { kind: 'assistant', content: [result] },
      ];
    },

    end() {
      const events = flush();
      for (const id of [...open.keys()]) {
        open.delete(id);
        closed.add(id);
        events.push({
          kind: 'assistant',
          content: [
            { type: 'tool_result', tool_use_id: id, content: UNFINISHED_TOOL_RESULT, is_error: true },
          ],
        });
      }
      return events;
    },
  };
}

/**
 * The kinds of `session/update` the SDK's schema reads; the compiler checks the list against the
 * SDK's own type, so an upgrade that adds or drops one fails the build until it is updated here.
 */
const SDK_UPDATE_KINDS: Record<SessionUpdate['sessionUpdate'], true> = {
  user_message_chunk: true,
  agent_message_chunk: true,
  agent_thought_chunk: true,
  tool_call: true,
  tool_call_update: true,
  plan: true,
  plan_update: true,
  plan_removed: true,
  available_commands_update: true,
  current_mode_update: true,
  config_option_update: true,
  session_info_update: true,
  usage_update: true,
  notice: true,
  compaction_update: true,
  compaction_summary_chunk: true,
  subagent_update: true,
  session_message: true,
  session_message_chunk: true,
};

/** Where a `session/update` of a kind the SDK does not read goes instead (an extension method). */
export const UNKNOWN_UPDATE_METHOD = '_sessiondesk/unknown_session_update';

type Message = Stream['readable'] extends ReadableStream<infer M> ? M : never;

/**
 * The SDK validates each `session/update` against its schema before any handler sees it, and
 * drops one of a kind it does not know (logging it to the console): a newer agent's update would
 * vanish. Such an update is passed on under an extension method of the client's own, which the
 * client's handler reads as an update, in its place among the others.
 */
export function withUnknownUpdates(stream: Stream): Stream {
  const relabel = new TransformStream<Message, Message>({
    transform(message, controller) {
      const { params } = message as { method?: unknown; params?: unknown };
      const kind =
        (message as { method?: unknown }).method === 'session/update' &&
        isObject(params) &&
        isObject(params.update)
          ? params.update.sessionUpdate
          : undefined;
      const known = typeof kind === 'string' && Object.hasOwn(SDK_UPDATE_KINDS, kind);
      controller.enqueue(
        kind === undefined || known || 'id' in message
          ? message
          : { ...message, method: UNKNOWN_UPDATE_METHOD },
      );
    },
  });
  return { readable: stream.readable.pipeThrough(relabel), writable: stream.writable };
}
