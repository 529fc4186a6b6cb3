import { tokenCost } from '../../src-shared/model-prices.js';
import { noticeText, type AgentEvent, type AgentUsage } from '../agents/agent-events.js';
import { normalTimestamp } from '../sessions/timestamps.js';
import { resultMessage } from '../agents/types.js';

/**
 * What one line of a CLI's own session file asks an imported session to record: the agent
 * events the live parsers produce, plus the person's prompts and the end of each run of the CLI
 * (a process: a session file holds one or more, a resumed conversation appending to the file).
 */
export type HistoryEvent =
  | Exclude<AgentEvent, { kind: 'usage' } | { kind: 'conversation' }>
  | { kind: 'prompt'; text: string }
  /**
   * A run ended: its tokens, and its cost in US dollars: the CLI's own where it recorded one,
   * else priced by the dated table in src-shared (model-prices.ts), null for a model it lacks;
   * and the model it ran, where the file says.
   */
  | { kind: 'run'; usage: RunTokens; costUsd: number | null; model?: string };

export type RunTokens = Omit<AgentUsage, 'costUsd'>;

/** What a session file says about its session as a whole; later lines update it. */
export interface HistoryFacts {
  conversationId?: string | undefined;
  cwd?: string | undefined;
  branch?: string | undefined;
  /** The last model used. */
  model?: string | undefined;
  /** The CLI's own title or summary, where it keeps one. */
  title?: string | undefined;
  firstAt?: string | undefined;
  lastAt?: string | undefined;
  /** The CLI recorded an error end (the last run failed). */
  failed: boolean;
}

/** Reads one session file line by line (complete lines only), in order. */
export interface HistoryParser {
  readonly facts: HistoryFacts;
  /**
   * The first bytes of lines this parser drops whatever follows them (the CLI's bookkeeping,
   * holding nothing it reads): the reader leaves such lines out without decoding them.
   */
  readonly unreadPrefixes?: readonly Buffer[];
  line(text: string): HistoryEvent[];
  /** The file's end for now (it may grow): ends what only the file's end ends. */
  flush(): HistoryEvent[];
  /** What a parser made later with this state needs to read on from here (JSON). */
  state(): string;
}

export type Line = Record<string, unknown>;

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function obj(value: unknown): Line | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Line) : undefined;
}

export function emptyUsage(): Required<AgentUsage> {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
}

/**
 * Notes a line's time as the session's first or last, in the API's form: times are compared as
 * text, and a CLI's own form (microseconds, an offset) would compare wrong and fail the API's
 * schema. A time that names no instant is left out.
 */
export function noteTime(facts: HistoryFacts, at: unknown): void {
  const time = normalTimestamp(at);
  if (!time) return;
  if (!facts.firstAt || time < facts.firstAt) facts.firstAt = time;
  if (!facts.lastAt || time > facts.lastAt) facts.lastAt = time;
}

/** A line that is not a JSON object (a torn or foreign line): kept as a notice unless blank. */
export function plainNotice(text: string): HistoryEvent[] {
  const trimmed = text.trim();
  return trimmed ? [{ kind: 'notice', level: 'info', text: noticeText(trimmed) }] : [];
}

/** A run's end priced by the table: for CLIs that record no cost of their own. */
export function pricedRun(model: string | undefined, usage: RunTokens): HistoryEvent {
  return { kind: 'run', usage, costUsd: tokenCost(model, usage), ...(model ? { model } : {}) };
}

/**
 * The end of a run of a CLI that marks no end of its own (the next prompt, an error, or the
 * file's end for now): its tokens priced by the table, and its result. The session's last run
 * decides whether it failed.
 */
export function endedRun(
  facts: HistoryFacts,
  usage: RunTokens,
  failed: boolean,
  message: string,
): HistoryEvent[] {
  facts.failed = failed;
  return [pricedRun(facts.model, usage), { kind: 'result', result: resultMessage(!failed, message, 0, 0) }];
}
