import type { ContentBlock } from '../../src-shared/sessions.js';
import { noticeText, num, parseJsonObject } from '../agents/agent-events.js';
import {
  noteTime,
  obj,
  plainNotice,
  endedRun,
  str,
  type HistoryEvent,
  type HistoryFacts,
  type HistoryParser,
  type Line,
  type RunTokens,
} from './history-events.js';

/** The parts of a record's `message` (Gemini API `Content`), each an object. */
function partsOf(message: unknown): Line[] {
  const parts = obj(message)?.parts;
  return Array.isArray(parts) ? parts.map((p) => obj(p) ?? {}) : [];
}

/** The plain text of a person's record: thoughts, files and function parts are not what they typed. */
function promptText(message: unknown): string {
  return partsOf(message)
    .filter((p) => p.thought !== true && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n')
    .trim();
}

function responseText(response: unknown): string {
  const r = obj(response);
  if (!r) return typeof response === 'string' ? response : JSON.stringify(response ?? '');
  return str(r.output) ?? str(r.error) ?? JSON.stringify(r);
}

/**
 * User records that are the person's own words. The CLI also writes the Goal runtime's and
 * background notifications' messages as `user` records (subtypes `goal_runtime`,
 * `notification`, `realtime_message`): those are the program's, shown as notices.
 */
const PROMPT_SUBTYPES = new Set([undefined, 'mid_turn_user_message', 'cron']);

/** System records worth a line in the transcript, and how each reads. */
const SYSTEM_NOTICES: Record<string, string> = {
  chat_compression: 'Qwen Code compressed the conversation: the model went on from a summary of it.',
  rewind: 'The conversation was rewound to an earlier prompt: the messages after it left the conversation.',
  slash_command: 'A slash command was run.',
};

const noUsage = (): RunTokens => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/**
 * Qwen Code's chat file, `projects/<project>/chats/<session id>.jsonl` under its runtime folder
 * (~/.qwen). Its ChatRecordingService only appends: one record per line, each with `uuid`,
 * `parentUuid`, `sessionId`, `timestamp`, `cwd` and `type`:
 * - `user`: the person's prompt (`message.parts`, Gemini API parts);
 * - `assistant`: one model response, with `model`, thought parts (`thought: true`), text, and
 *   `functionCall` parts; its `usageMetadata` counts the prompt with its cached part, and the
 *   candidates with their thoughts;
 * - `tool_result`: the `functionResponse` of a call, with `toolCallResult.status`;
 * - `system`: bookkeeping by `subtype` (`ui_telemetry`, whose `qwen-code.api_error` events are the
 *   failed model requests; `chat_compression`; `rewind`; `custom_title`; snapshots).
 * A resume (`--resume ID`, `--continue`) appends to the same file. A rewind or a compression
 * appends a record and re-roots `parentUuid` (reconstructHistory walks the chain from the last
 * record on resume), so what was rewound stays in the file: it is shown in the file's order,
 * with the rewind's notice after it. Qwen Code records no cost: the price table prices each run.
 */
export function createQwenCodeHistoryParser(state?: string): HistoryParser {
  const saved = (state ? JSON.parse(state) : {}) as Partial<QwenState>;
  const facts: HistoryFacts = saved.facts ?? { failed: false };
  let usage = saved.usage ?? noUsage();
  let runOpen = saved.runOpen ?? false;

  function endRun(failed: boolean, message: string): HistoryEvent[] {
    if (!runOpen) return [];
    runOpen = false;
    const events = endedRun(facts, usage, failed, message);
    usage = noUsage();
    return events;
  }

  function assistant(record: Line): HistoryEvent[] {
    facts.model = str(record.model) ?? facts.model;
    const tokens = obj(record.usageMetadata);
    if (tokens) {
      const cached = num(tokens.cachedContentTokenCount);
      usage.inputTokens += Math.max(0, num(tokens.promptTokenCount) - cached);
      usage.outputTokens += num(tokens.candidatesTokenCount);
      usage.cacheReadTokens += cached;
    }
    const content: ContentBlock[] = [];
    for (const part of partsOf(record.message)) {
      const call = obj(part.functionCall);
      if (call) {
        const input = obj(call.args) ?? {};
        content.push({ type: 'tool_use', id: str(call.id) ?? 'call', name: str(call.name) ?? 'tool', input });
      } else if (typeof part.text === 'string' && part.text !== '') {
        content.push(
          part.thought === true
            ? { type: 'thinking', thinking: part.text }
            : { type: 'text', text: part.text },
        );
      }
    }
    return content.length > 0 ? [{ kind: 'assistant', content }] : [];
  }

  function toolResult(record: Line): HistoryEvent[] {
    const status = str(obj(record.toolCallResult)?.status);
    const content: ContentBlock[] = [];
    for (const part of partsOf(record.message)) {
      const response = obj(part.functionResponse);
      if (!response) continue;
      const isError =
        status === 'error' || status === 'cancelled' || obj(response.response)?.error !== undefined;
      content.push({
        type: 'tool_result',
        tool_use_id: str(response.id) ?? str(obj(record.toolCallResult)?.callId) ?? 'call',
        content: responseText(response.response),
        ...(isError ? { is_error: true } : {}),
      });
    }
    return content.length > 0 ? [{ kind: 'assistant', content }] : [];
  }

  function system(record: Line): HistoryEvent[] {
    const subtype = str(record.subtype) ?? '';
    const payload = obj(record.systemPayload);
    if (subtype === 'custom_title') {
      facts.title = str(payload?.customTitle) ?? facts.title;
      return [];
    }
    if (subtype === 'ui_telemetry') {
      const event = obj(payload?.uiEvent);
      // Requests of the CLI's own helpers (memory extraction, titles) are not the conversation's.
      if (event?.['event.name'] !== 'qwen-code.api_error' || event.subagent_id !== undefined) return [];
      const message = str(event.error_message) ?? 'The model request failed.';
      return [{ kind: 'notice', level: 'error', text: noticeText(message) }, ...endRun(true, message)];
    }
    const notice = SYSTEM_NOTICES[subtype];
    if (!notice) return [];
    const command = subtype === 'slash_command' ? str(payload?.rawCommand) : undefined;
    return [
      { kind: 'notice', level: 'info', text: noticeText(command ? `Slash command: ${command}` : notice) },
    ];
  }

  function user(record: Line): HistoryEvent[] {
    const text = promptText(record.message);
    if (!text) return [];
    if (!PROMPT_SUBTYPES.has(str(record.subtype)))
      return [{ kind: 'notice', level: 'info', text: noticeText(text) }];
    // A message the person sent while the model worked goes into the same run.
    const midTurn = str(record.subtype) === 'mid_turn_user_message';
    const events = [...(midTurn ? [] : endRun(false, 'Done.')), { kind: 'prompt', text } as HistoryEvent];
    runOpen = true;
    return events;
  }

  return {
    facts,
    line(text) {
      const record = parseJsonObject(text);
      if (!record) return plainNotice(text);
      if (typeof record.type !== 'string') return plainNotice(text);
      noteTime(facts, record.timestamp);
      facts.conversationId ??= str(record.sessionId);
      facts.cwd ??= str(record.cwd);
      facts.branch = str(record.gitBranch) ?? facts.branch;
      switch (record.type) {
        case 'user':
          return user(record);
        case 'assistant':
          return assistant(record);
        case 'tool_result':
          return toolResult(record);
        case 'system':
          return system(record);
        default:
          return plainNotice(text);
      }
    },
    flush() {
      return endRun(facts.failed, 'Done.');
    },
    state() {
      const state: QwenState = { facts, usage, runOpen };
      return JSON.stringify(state);
    },
  };
}

interface QwenState {
  facts: HistoryFacts;
  usage: RunTokens;
  runOpen: boolean;
}
