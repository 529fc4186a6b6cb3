import { readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readLines } from '../history/file-reader.js';
import { num, parseJsonObject, type AgentUsage } from './agent-events.js';

/**
 * What a run stopped before its final line used, from the CLI's own session file: Codex and
 * Gemini CLI print usage only at the end of a run, but log it after each model response.
 */
export interface LoggedUsageInput {
  /** The environment the CLI ran with: where its files are (HOME, CODEX_HOME). */
  env: NodeJS.ProcessEnv;
  conversationId: string;
  /** The conversation's usage before this run, for a log that keeps running totals. */
  usageBefore?: AgentUsage | undefined;
}

export type LoggedUsage = (input: LoggedUsageInput) => Promise<AgentUsage | null>;

/** Each record of a JSONL file, parsed; lines that are not objects are skipped. */
async function* records(path: string): AsyncGenerator<Record<string, unknown>> {
  for await (const { lines } of readLines(path, 0)) {
    for (const line of lines) {
      const record = parseJsonObject(line);
      if (record) yield record;
    }
  }
}

/** Names in a folder, or none when it cannot be read. */
async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/**
 * Codex: `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` under CODEX_HOME (else
 * ~/.codex). Each `token_usage_record` holds the thread's totals so far, so the run's usage is
 * the last one's less what the conversation used before the run. `toUsage` and `minus` are
 * the parser's own, so that the figures agree with a run that ends normally.
 */
export function codexLoggedUsage(
  toUsage: (usage: Record<string, unknown>) => AgentUsage,
  minus: (total: AgentUsage, before: AgentUsage | undefined) => AgentUsage,
): LoggedUsage {
  return async ({ env, conversationId, usageBefore }) => {
    const sessions = join(env.CODEX_HOME || join(env.HOME || homedir(), '.codex'), 'sessions');
    const suffix = `-${conversationId}.jsonl`;
    // Newest days first: the run's thread was written to lately.
    for (const year of (await names(sessions)).sort().reverse())
      for (const month of (await names(join(sessions, year))).sort().reverse())
        for (const day of (await names(join(sessions, year, month))).sort().reverse()) {
          const dir = join(sessions, year, month, day);
          const file = (await names(dir)).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
          if (file === undefined) continue;
          let total: AgentUsage | null = null;
          for await (const record of records(join(dir, file))) {
            const payload = record.payload as Record<string, unknown> | undefined;
            const thread = payload?.thread_token_usage;
            if (record.type === 'token_usage_record' && typeof thread === 'object' && thread !== null)
              total = toUsage(thread as Record<string, unknown>);
          }
          return total && minus(total, usageBefore);
        }
    return null;
  };
}

/** Whether a Gemini CLI user record is a person's prompt (not only tool results sent back). */
function isPrompt(record: Record<string, unknown>): boolean {
  const { content } = record;
  if (typeof content === 'string') return content.trim() !== '';
  return (
    Array.isArray(content) &&
    content.some((part) => typeof (part as { text?: unknown } | null)?.text === 'string')
  );
}

/**
 * Gemini CLI: `~/.gemini/tmp/<project>/chats/session-<time>-<id start>.jsonl`, whose first line
 * names the session. Each `gemini` record (written again under its id as its tool calls
 * complete) holds the tokens of its model response; the run's are those after its prompt, the
 * last person's record. Counted as the CLI's own result line counts them: input without the
 * cached tokens, output without thoughts.
 */
export const geminiLoggedUsage: LoggedUsage = async ({ env, conversationId }) => {
  const projects = join(env.HOME || homedir(), '.gemini', 'tmp');
  const suffix = `-${conversationId.slice(0, 8)}.jsonl`;
  for (const project of await names(projects)) {
    const chats = join(projects, project, 'chats');
    for (const file of await names(chats)) {
      if (!file.startsWith('session-') || !file.endsWith(suffix)) continue;
      let ours: boolean | undefined;
      let responses = new Map<unknown, Record<string, unknown>>();
      for await (const record of records(join(chats, file))) {
        ours ??= record.sessionId === conversationId;
        if (!ours) break;
        if (record.type === 'user' && isPrompt(record)) responses = new Map();
        else if (record.type === 'gemini' && typeof record.tokens === 'object' && record.tokens !== null)
          responses.set(record.id, record.tokens as Record<string, unknown>);
      }
      if (!ours) continue;
      const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      for (const tokens of responses.values()) {
        const cached = num(tokens.cached);
        usage.inputTokens += Math.max(0, num(tokens.input) - cached);
        usage.outputTokens += num(tokens.output);
        usage.cacheReadTokens += cached;
      }
      return responses.size > 0 ? usage : null;
    }
  }
  return null;
};
