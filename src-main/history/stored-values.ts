import { isAbsolute } from 'node:path';
import { TITLE_UPDATE_MAX_CHARS } from '../../src-shared/constants.js';
import { BRANCH_PATTERN } from '../../src-shared/repo-url.js';
import { TaskSchema, type Task } from '../../src-shared/sessions.js';
import { checkedConversationId } from '../agents/kinds/agent-command.js';
import { normalTimestamp } from '../sessions/timestamps.js';
import type { HistoryEvent, HistoryFacts, RunTokens } from './history-events.js';

/**
 * Every value a parser took from a CLI's file passes here before it is stored: a file any
 * program can write may hold anything where a CLI writes a time, an id or a count. What can be
 * put in the API's form is (times in its ISO form, counts as whole tokens, text without control
 * characters and cut to length); what cannot is left out, and the session is imported without it.
 */

/** More tokens than any run has used: a count past it is a file gone wrong. */
const MAX_RUN_TOKENS = 1e12;
/** A run's cost past this many dollars is not a cost. */
const MAX_RUN_COST_USD = 1e6;
const MAX_TASKS = 1000;
const MAX_TASK_TEXT = 2000;
const MAX_MODEL_CHARS = 200;
const MAX_PATH_CHARS = 4096;

const CONTROL = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;
/** A UTF-16 half without its other half: JSON can carry one, UTF-8 cannot. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
const all = (pattern: RegExp) => new RegExp(pattern.source, 'gu');

/** Text fit for one line of a page: well-formed, no control characters, at most `max` chars. */
function lineText(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const text = value
    .replace(all(LONE_SURROGATE), '\ufffd')
    .replace(all(CONTROL), ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  if (text === '') return undefined;
  return text.length > max ? `${text.slice(0, max - 1).replace(/[\ud800-\udbff]$/u, '')}…` : text;
}

/** The value as it is when it has no control characters, is not blank and fits; else undefined. */
function exact(value: string | undefined, max: number): string | undefined {
  if (value === undefined || value.length > max || value.trim() === '') return undefined;
  return CONTROL.test(value) || LONE_SURROGATE.test(value) ? undefined : value;
}

function conversationId(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  try {
    return checkedConversationId(id);
  } catch {
    return undefined;
  }
}

/** A working folder as a CLI recorded it: an absolute path, or nothing. */
export function storedFolder(path: string | undefined): string | undefined {
  const folder = exact(path, MAX_PATH_CHARS);
  return folder !== undefined && isAbsolute(folder) ? folder : undefined;
}

/** The facts of a file as they may be stored. */
export function storedFacts(facts: HistoryFacts): HistoryFacts {
  return {
    conversationId: conversationId(facts.conversationId),
    cwd: storedFolder(facts.cwd),
    branch: facts.branch !== undefined && BRANCH_PATTERN.test(facts.branch) ? facts.branch : undefined,
    model: exact(facts.model, MAX_MODEL_CHARS),
    title: lineText(facts.title, TITLE_UPDATE_MAX_CHARS),
    firstAt: normalTimestamp(facts.firstAt),
    lastAt: normalTimestamp(facts.lastAt),
    failed: facts.failed === true,
  };
}

function tokens(value: number): number {
  return Number.isFinite(value) ? Math.min(Math.max(Math.floor(value), 0), MAX_RUN_TOKENS) : 0;
}

function runTokens(usage: RunTokens): RunTokens {
  return {
    inputTokens: tokens(usage.inputTokens),
    outputTokens: tokens(usage.outputTokens),
    cacheReadTokens: tokens(usage.cacheReadTokens),
    cacheWriteTokens: tokens(usage.cacheWriteTokens),
  };
}

function task(value: Task): Task | null {
  const parsed = TaskSchema.safeParse(value);
  if (!parsed.success) return null;
  const id = lineText(parsed.data.id, MAX_TASK_TEXT);
  const title = lineText(parsed.data.title, MAX_TASK_TEXT);
  return id === undefined || title === undefined ? null : { id, title, status: parsed.data.status };
}

/** The events of a line as they may be stored. */
export function storedEvents(events: HistoryEvent[]): HistoryEvent[] {
  return events.map((event) => {
    if (event.kind === 'run') {
      const cost = event.costUsd;
      const costUsd =
        cost !== null && Number.isFinite(cost) && cost >= 0 && cost <= MAX_RUN_COST_USD ? cost : null;
      const model = exact(event.model, MAX_MODEL_CHARS);
      return { kind: 'run', usage: runTokens(event.usage), costUsd, ...(model ? { model } : {}) };
    }
    if (event.kind === 'tasks') {
      const tasks = event.tasks.slice(0, MAX_TASKS).flatMap((t) => task(t) ?? []);
      return { kind: 'tasks', tasks };
    }
    return event;
  });
}
