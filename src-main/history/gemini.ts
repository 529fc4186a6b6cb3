import type { ContentBlock, Task } from '../../src-shared/sessions.js';
import { noticeText, num, parseJsonObject } from '../agents/agent-events.js';
import { writeTodosTasks } from '../agents/kinds/gemini/parse.js';
import {
  noteTime,
  plainNotice,
  endedRun,
  type RunTokens,
  obj,
  str,
  type HistoryEvent,
  type HistoryFacts,
  type HistoryParser,
  type Line,
} from './history-events.js';

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => str(obj(p)?.text) ?? '')
    .filter(Boolean)
    .join('\n');
}

function resultText(result: unknown): string {
  if (!Array.isArray(result)) return typeof result === 'string' ? result : JSON.stringify(result ?? '');
  return result
    .map((part) => {
      const response = obj(obj(obj(part)?.functionResponse)?.response);
      return str(response?.output) ?? str(response?.error) ?? (response ? JSON.stringify(response) : '');
    })
    .join('\n');
}

/**
 * A record's thoughts as the model streamed them: the CLI keeps one entry per streamed chunk
 * ("The user want", "s a greeting."), and a chunk that opens with a bold heading starts a new
 * thought (its `subject`). Chunks of one thought are joined as they came, with nothing between.
 */
function thoughtsOf(thoughts: unknown): string[] {
  const joined: string[] = [];
  let current: string | undefined;
  for (const thought of Array.isArray(thoughts) ? thoughts : []) {
    const t = obj(thought);
    const subject = str(t?.subject);
    const description = str(t?.description) ?? '';
    if (subject || current === undefined) {
      if (current) joined.push(current);
      current = subject ? [subject, description].filter(Boolean).join(': ') : description;
    } else {
      current += description;
    }
  }
  if (current) joined.push(current);
  return joined;
}

/** The CLI's own opening words to the model (where it is, the date), not the person's prompt. */
const CLI_CONTEXT = /^<(session_context|hook_context)>/u;

/**
 * Gemini CLI's chat file, `tmp/<project>/chats/session-*.jsonl`: a header line (session id, start
 * time), then message records (`user`, `gemini` with its thoughts, tokens, model and tool calls
 * holding their results, `info`, `error`, `warning`), and `$set` lines that update the header. A
 * `gemini` record is written again under the same id as its tool calls complete: only the parts
 * not shown yet are shown. A user record holding
 * only function responses repeats the results already in the calls. Gemini records no cost: the price table prices each run.
 */
export function createGeminiHistoryParser(state?: string): HistoryParser {
  const saved = (state ? JSON.parse(state) : {}) as Partial<GeminiState>;
  const facts: HistoryFacts = saved.facts ?? { failed: false };
  let usage = saved.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let runOpen = saved.runOpen ?? false;
  /** The last `gemini` record's id, and which of its parts were already shown. */
  let lastId = saved.lastId;
  let shown = new Set(saved.shown ?? []);

  function geminiEvents(record: Line): HistoryEvent[] {
    facts.model = str(record.model) ?? facts.model;
    if (record.id !== lastId) {
      lastId = str(record.id);
      shown = new Set();
      const tokens = obj(record.tokens);
      if (tokens) {
        const cached = num(tokens.cached);
        usage.inputTokens += Math.max(0, num(tokens.input) - cached);
        usage.outputTokens += num(tokens.output) + num(tokens.thoughts);
        usage.cacheReadTokens += cached;
      }
    }
    const fresh = (key: string) => !shown.has(key) && shown.add(key) !== undefined;
    const content: ContentBlock[] = [];
    thoughtsOf(record.thoughts).forEach((thinking, i) => {
      if (fresh(`thought:${i}`)) content.push({ type: 'thinking', thinking });
    });
    const text = partsText(record.content);
    if (text && fresh('text')) content.push({ type: 'text', text });
    const events: HistoryEvent[] = [];
    const results: ContentBlock[] = [];
    let tasks: Task[] | null = null;
    for (const call of Array.isArray(record.toolCalls) ? record.toolCalls : []) {
      const c = obj(call) ?? {};
      const id = str(c.id) ?? 'call';
      const name = str(c.name) ?? 'tool';
      if (fresh(`call:${id}`)) content.push({ type: 'tool_use', id, name, input: c.args ?? {} });
      const status = str(c.status);
      if ((c.result !== undefined || status) && fresh(`result:${id}`)) {
        const isError = status === 'error' || status === 'cancelled';
        results.push({
          type: 'tool_result',
          tool_use_id: id,
          content: resultText(c.result),
          ...(isError ? { is_error: true } : {}),
        });
        if (name === 'write_todos' && !isError) tasks = writeTodosTasks(c.args) ?? tasks;
      }
    }
    if (content.length > 0) events.push({ kind: 'assistant', content });
    if (results.length > 0) events.push({ kind: 'assistant', content: results });
    if (tasks) events.push({ kind: 'tasks', tasks });
    return events;
  }

  /** A prompt starts a run; the previous one ends there (its usage summed over its replies). */
  function endRun(failed: boolean, message: string): HistoryEvent[] {
    if (!runOpen) return [];
    runOpen = false;
    const events = endedRun(facts, usage, failed, message);
    usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    return events;
  }

  function record(line: Line, text: string): HistoryEvent[] {
    noteTime(facts, line.timestamp);
    const events: HistoryEvent[] = [];
    switch (line.type) {
      case 'gemini':
        return geminiEvents(line);
      case 'user': {
        const prompt = partsText(line.content).trim();
        if (!prompt) return events;
        // The CLI writes its context as a record of its own when it writes a conversation's
        // messages out again (resuming an older chat file, rewriting an unreadable one); the
        // first time it is only in the `$set` of `messages`, which restates the history.
        if (CLI_CONTEXT.test(prompt)) return events;
        // The CLI's own words to the model (a loop warning) are not the person's prompt.
        if (prompt.startsWith('System: ')) {
          events.push({ kind: 'notice', level: 'error', text: noticeText(prompt.slice('System: '.length)) });
          return events;
        }
        events.push(...endRun(false, 'Done.'), { kind: 'prompt', text: prompt });
        runOpen = true;
        return events;
      }
      case 'error':
        events.push({
          kind: 'notice',
          level: 'error',
          text: noticeText(partsText(line.content) || text.trim()),
        });
        events.push(...endRun(true, partsText(line.content) || 'The CLI reported an error.'));
        return events;
      case 'info':
      case 'warning':
        events.push({
          kind: 'notice',
          level: line.type === 'warning' ? 'error' : 'info',
          text: noticeText(partsText(line.content)),
        });
        return events;
      default:
        events.push({ kind: 'notice', level: 'info', text: noticeText(text.trim()) });
        return events;
    }
  }

  return {
    facts,
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainNotice(text);
      if (typeof line.sessionId === 'string' && line.type === undefined) {
        facts.conversationId = line.sessionId;
        noteTime(facts, line.startTime);
        return [];
      }
      const set = obj(line.$set);
      if (set) {
        // Header updates; `messages` restates the context the CLI sends first, not a prompt.
        noteTime(facts, set.lastUpdated);
        facts.title = str(set.summary) ?? facts.title;
        return [];
      }
      if (typeof line.id === 'string' && typeof line.type === 'string') return record(line, text);
      return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
    },
    flush() {
      // A run ends with the file for now; a later prompt in the same file starts the next one.
      return endRun(facts.failed, 'Done.');
    },
    state() {
      const state: GeminiState = { facts, usage, runOpen, lastId, shown: [...shown] };
      return JSON.stringify(state);
    },
  };
}

interface GeminiState {
  facts: HistoryFacts;
  usage: RunTokens;
  runOpen: boolean;
  lastId: string | undefined;
  shown: string[];
}
