import type { ContentBlock, ResultMessage, Task } from '../../src-shared/sessions.js';

/**
 * Tokens and cost of one run (one process of the CLI). Each `usage` event carries the run's
 * totals so far, so a later one within the same run replaces an earlier one; a session's total
 * is the sum over its runs. `costUsd` is present only when the CLI reports a cost.
 */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd?: number;
}

/** What one line of an agent CLI's output asks the session to record, whatever the CLI. */
export type AgentEvent =
  /** Agent-side content; tool results included. A sub-agent's content names its parent call. */
  | { kind: 'assistant'; content: ContentBlock[]; parentToolUseId?: string }
  /** The whole task list as it now stands (not a change to it). */
  | { kind: 'tasks'; tasks: Task[] }
  /** The CLI's own conversation id, which a follow-up passes back to resume. */
  | { kind: 'conversation'; id: string }
  | { kind: 'usage'; usage: AgentUsage }
  /** How the run ended as the CLI reports it; `errorSubtype` keeps the CLI's own reason. */
  | { kind: 'result'; result: ResultMessage; errorSubtype?: string }
  /** Something the CLI said outside its known events: shown, never dropped. */
  | { kind: 'notice'; text: string; level: 'error' | 'info' };

/** Turns a CLI's output, line by line, into events; `end` once the output has ended. */
export interface AgentParser {
  line(text: string): AgentEvent[];
  end(): AgentEvent[];
}

/** Longest text a notice keeps of a line it reports; the rest is cut with a marker. */
export const NOTICE_MAX_CHARS = 2000;

export function noticeText(text: string): string {
  return text.length > NOTICE_MAX_CHARS ? `${text.slice(0, NOTICE_MAX_CHARS)}… (cut)` : text;
}

/** A line that is not JSON: kept as a notice unless blank. */
export function plainLineNotice(text: string): AgentEvent[] {
  const trimmed = text.trim();
  return trimmed ? [{ kind: 'notice', level: 'info', text: noticeText(trimmed) }] : [];
}

/** Parses a line of JSON output into an object, or null when it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * The task list once its run has ended or was stopped. The specification's statuses have no
 * "stopped", so a task still `in_progress` goes back to `pending`: not done, and nobody is
 * working on it any more. Completed and pending tasks are unchanged. Null when nothing changes.
 */
export function closeOpenTasks(tasks: Task[]): Task[] | null {
  if (!tasks.some((t) => t.status === 'in_progress')) return null;
  return tasks.map((t) => (t.status === 'in_progress' ? { ...t, status: 'pending' } : t));
}

/** What a tool call left without a result gets as its result when its run ends. */
export const UNFINISHED_TOOL_RESULT = 'No result: the run ended before this tool call finished.';

/**
 * Tool calls waiting for their results, per parent (sub-agent calls under their parent call), so
 * that a run's end can close the ones left open.
 */
export class OpenToolCalls {
  private readonly open = new Map<string, string | undefined>();

  opened(id: string, parentToolUseId?: string): void {
    this.open.set(id, parentToolUseId);
  }

  closed(id: string): void {
    this.open.delete(id);
  }

  /** Error results for every call still open, one assistant event per parent, in order. */
  closeAll(): AgentEvent[] {
    const byParent = new Map<string | undefined, ContentBlock[]>();
    for (const [id, parent] of this.open) {
      const blocks = byParent.get(parent) ?? [];
      blocks.push({ type: 'tool_result', tool_use_id: id, content: UNFINISHED_TOOL_RESULT, is_error: true });
      byParent.set(parent, blocks);
    }
    this.open.clear();
    return [...byParent].map(([parent, content]) =>
      parent === undefined
        ? { kind: 'assistant', content }
        : { kind: 'assistant', content, parentToolUseId: parent },
    );
  }
}

/** A number from a JSON field, 0 when absent or not a number. */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
