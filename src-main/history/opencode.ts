import type { ContentBlock } from '../../src-shared/sessions.js';
import { noticeText, num, parseJsonObject } from '../agents/agent-events.js';
import { resultMessage } from '../agents/types.js';
import { tokenCost } from '../../src-shared/model-prices.js';
import {
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
 * OpenCode's session as opencode-store.ts hands it over: `{ session }` (its row: id, title,
 * directory, times in epoch milliseconds), then `{ message, parts }` per message. A `user`
 * message's text parts are the prompt (parts OpenCode added itself are `synthetic`); each
 * `assistant` message is one model step: its reasoning, text and tool parts (the call's input,
 * and its output or error once `state.status` says it ended), and its tokens and cost. A prompt
 * starts a run; the next prompt, or the session's end for now, ends it with the steps' tokens.
 * OpenCode's own cost is taken when it recorded one above zero; else the price table's.
 */
export function createOpencodeHistoryParser(state?: string): HistoryParser {
  const saved = (state ? JSON.parse(state) : {}) as Partial<OpencodeState>;
  const facts: HistoryFacts = saved.facts ?? { failed: false };
  let usage = saved.usage ?? emptyTokens();
  let cost = saved.cost ?? 0;
  let runOpen = saved.runOpen ?? false;

  const at = (ms: unknown) =>
    typeof ms === 'number' && Number.isFinite(ms) && Math.abs(ms) < 8.64e15
      ? new Date(ms).toISOString()
      : undefined;

  function endRun(failed: boolean, message: string): HistoryEvent[] {
    if (!runOpen) return [];
    runOpen = false;
    facts.failed = failed;
    const costUsd = cost > 0 ? cost : tokenCost(facts.model, usage);
    const events: HistoryEvent[] = [
      { kind: 'run', usage, costUsd, ...(facts.model ? { model: facts.model } : {}) },
      { kind: 'result', result: resultMessage(!failed, message, 0, 0) },
    ];
    usage = emptyTokens();
    cost = 0;
    return events;
  }

  function prompt(parts: Line[]): HistoryEvent[] {
    const text = parts
      .filter((p) => p.type === 'text' && p.synthetic !== true)
      .map((p) => str(p.text) ?? '')
      .join('\n')
      .trim();
    if (!text) return [];
    const events = [...endRun(false, 'Done.'), { kind: 'prompt' as const, text }];
    runOpen = true;
    return events;
  }

  function step(message: Line, parts: Line[]): HistoryEvent[] {
    facts.model = str(message.modelID) ?? facts.model;
    const tokens = obj(message.tokens);
    if (tokens) {
      const cache = obj(tokens.cache);
      // A count below zero is a row gone wrong: it must not take from the other steps' tokens.
      const count = (value: unknown) => Math.max(0, num(value));
      usage.inputTokens += count(tokens.input);
      usage.outputTokens += count(tokens.output) + count(tokens.reasoning);
      usage.cacheReadTokens += count(cache?.read);
      usage.cacheWriteTokens += count(cache?.write);
    }
    cost += Math.max(0, num(message.cost));
    const content: ContentBlock[] = [];
    const results: ContentBlock[] = [];
    for (const part of parts) {
      if (part.type === 'reasoning' && str(part.text))
        content.push({ type: 'thinking', thinking: str(part.text)! });
      else if (part.type === 'text' && str(part.text) && part.synthetic !== true)
        content.push({ type: 'text', text: str(part.text)! });
      else if (part.type === 'tool') {
        const id = str(part.callID) ?? str(part.id) ?? 'call';
        const call = obj(part.state) ?? {};
        content.push({ type: 'tool_use', id, name: str(part.tool) ?? 'tool', input: call.input ?? {} });
        if (call.status === 'completed' || call.status === 'error') {
          const isError = call.status === 'error';
          const output = isError ? call.error : call.output;
          results.push({
            type: 'tool_result',
            tool_use_id: id,
            content: typeof output === 'string' ? output : JSON.stringify(output ?? ''),
            ...(isError ? { is_error: true } : {}),
          });
        }
      }
    }
    const events: HistoryEvent[] = [];
    if (content.length > 0) events.push({ kind: 'assistant', content });
    if (results.length > 0) events.push({ kind: 'assistant', content: results });
    const error = obj(message.error);
    if (error) {
      const said = str(obj(error.data)?.message) ?? str(error.name) ?? 'OpenCode reported an error.';
      events.push({ kind: 'notice', level: 'error', text: noticeText(said) });
      events.push(...endRun(true, said));
    }
    return events;
  }

  return {
    facts,
    line(text) {
      const line = parseJsonObject(text);
      if (!line) return plainNotice(text);
      const session = obj(line.session);
      if (session) {
        facts.conversationId = str(session.id) ?? facts.conversationId;
        facts.title = str(session.title) ?? facts.title;
        facts.cwd = str(session.directory) ?? facts.cwd;
        noteTime(facts, at(session.time_created));
        noteTime(facts, at(session.time_updated));
        return [];
      }
      const message = obj(line.message);
      if (!message) return [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
      const listed: unknown[] = Array.isArray(line.parts) ? line.parts : [];
      const parts = listed.flatMap((part): Line[] => {
        const found = obj(part);
        return found ? [found] : [];
      });
      // A part too large to load, or not JSON, comes as text: kept as a notice.
      const skipped = listed.filter((part) => typeof part === 'string');
      noteTime(facts, at(message.time_created));
      noteTime(facts, at(message.time_updated));
      const events: HistoryEvent[] =
        message.role === 'user'
          ? prompt(parts)
          : message.role === 'assistant'
            ? step(message, parts)
            : [{ kind: 'notice', level: 'info', text: noticeText(text.trim()) }];
      for (const part of skipped) events.push(...plainNotice(String(part)));
      return events;
    },
    flush() {
      return endRun(facts.failed, 'Done.');
    },
    state() {
      const state: OpencodeState = { facts, usage, cost, runOpen };
      return JSON.stringify(state);
    },
  };
}

function emptyTokens(): RunTokens {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

interface OpencodeState {
  facts: HistoryFacts;
  usage: RunTokens;
  cost: number;
  runOpen: boolean;
}
