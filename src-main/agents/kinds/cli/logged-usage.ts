import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { tokenCost } from '../../../../src-shared/model-prices.js';
import { readLines } from '../../../history/file-reader.js';
import { openRegularFile } from '../../../history/safe-files.js';
import { num, parseJsonObject, type AgentUsage } from '../../agent-events.js';
import { findConversationFile, names } from './conversation-files.js';

/**
 * What a run that ended before its final line used, from the CLI's own session file: Codex
 * and Gemini CLI print usage only at the end of a run, but log it after each model response;
 * after a crash of the server, the file is all that is left of what any CLI reported.
 */
export interface LoggedUsageInput {
  /** The environment the CLI ran with: where its files are (HOME, CODEX_HOME). */
  env: NodeJS.ProcessEnv;
  conversationId: string;
  /**
   * The run's prompt (or its end, for prompts passed together): a log whose last prompt is
   * another was not reached by this run, whose usage is then unknown.
   */
  prompt: string;
  /**
   * The conversation's file, when it is known (an imported session's own, which a run's sandbox
   * sees at another place); else it is looked for where `env` says the CLI keeps its files.
   */
  file?: string | undefined;
}

export type LoggedUsage = (input: LoggedUsageInput) => Promise<AgentUsage | null>;

/**
 * Each record of a JSONL file inside `root`, parsed; lines that are not objects are skipped. The
 * CLI's folder is the agent's to write: none when the file is a link, a pipe or unreadable.
 */
async function* records(root: string, path: string): AsyncGenerator<Record<string, unknown>> {
  const handle = await openRegularFile(root, path).catch(() => null);
  if (!handle) return;
  try {
    for await (const { lines } of readLines(handle, 0)) {
      for (const line of lines) {
        const record = parseJsonObject(line);
        if (record) yield record;
      }
    }
  } finally {
    await handle.close();
  }
}

/**
 * Codex: `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` under CODEX_HOME (else
 * ~/.codex). Each `token_usage_record` holds its model response's own tokens (`usage`) beside
 * the thread's totals; the run's usage is the sum of its turn's responses (the last turn, when
 * its prompt is the run's). The thread's totals are not used: Codex restores them on
 * a resume from the earlier turns' records only, so they leave out turns logged without one (a
 * conversation begun by another writer of the file), and Session Desk's own sum of its earlier
 * runs is no measure of what they hold. `toUsage` is the parser's own, so that the figures agree
 * with a run that ends normally.
 */
export function codexLoggedUsage(toUsage: (usage: Record<string, unknown>) => AgentUsage): LoggedUsage {
  return async ({ env, conversationId, prompt, file }) => {
    const found =
      file ??
      (await findConversationFile(
        'codex',
        env.CODEX_HOME || join(env.HOME || homedir(), '.codex'),
        conversationId,
      ));
    if (found === null) return null;
    // Each run is one turn: its records are those after the turn's start, when the turn's prompt
    // is the run's. A file an earlier Codex wrote (codex-acp's engine) has no token_usage_record:
    // its token_count events give each response's tokens, repeated when only rate limits changed.
    let responses: AgentUsage[] = [];
    let counted: AgentUsage[] = [];
    let lastTotal = '';
    let runsTurn = false;
    for await (const record of records(dirname(found), found)) {
      const payload = (record.payload ?? {}) as Record<string, unknown>;
      const info = payload.info as Record<string, unknown> | null | undefined;
      if (record.type === 'event_msg' && payload.type === 'task_started') {
        responses = [];
        counted = [];
        runsTurn = false;
      } else if (record.type === 'response_item' && payload.type === 'message' && payload.role === 'user') {
        runsTurn ||= isRunPrompt(promptText(payload.content), prompt);
      } else if (record.type === 'token_usage_record') {
        // A record of another thread (a helper Codex started) is not this conversation's.
        const ours = payload.thread_id === undefined || payload.thread_id === conversationId;
        if (ours && typeof payload.usage === 'object' && payload.usage !== null)
          responses.push(toUsage(payload.usage as Record<string, unknown>));
      } else if (record.type === 'event_msg' && payload.type === 'token_count' && info) {
        const total = JSON.stringify(info.total_token_usage);
        if (
          total !== lastTotal &&
          typeof info.last_token_usage === 'object' &&
          info.last_token_usage !== null
        )
          counted.push(toUsage(info.last_token_usage as Record<string, unknown>));
        lastTotal = total;
      }
    }
    if (responses.length === 0) responses = counted;
    if (!runsTurn || responses.length === 0) return null;
    const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const one of responses) {
      usage.inputTokens += one.inputTokens;
      usage.outputTokens += one.outputTokens;
      usage.cacheReadTokens += one.cacheReadTokens;
      usage.cacheWriteTokens += one.cacheWriteTokens;
    }
    return usage;
  };
}

/** The text of a prompt record's content (a string, or parts with text), '' when none. */
function promptText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part as { text?: unknown } | null)?.text)
    .filter((text) => typeof text === 'string')
    .join('\n');
}

/** Whether the prompt a log recorded last is the run's. */
function isRunPrompt(recorded: string, prompt: string): boolean {
  return recorded.trim() !== '' && recorded.includes(prompt.trim());
}

/**
 * Gemini CLI: `~/.gemini/tmp/<project>/chats/session-<time>-<id start>.jsonl`, whose first line
 * names the session. Each `gemini` record (written again under its id as its tool calls
 * complete) holds the tokens of its model response; the run's are those after its prompt, the
 * last person's record. Counted as the CLI's own result line counts them: input without the
 * cached tokens, output without thoughts.
 */
export const geminiLoggedUsage: LoggedUsage = async ({ env, conversationId, prompt, file: known }) => {
  // GEMINI_CLI_HOME stands for the home folder the CLI keeps its `.gemini` in.
  const projects = join(env.GEMINI_CLI_HOME || env.HOME || homedir(), '.gemini', 'tmp');
  const suffix = `-${conversationId.slice(0, 8)}.jsonl`;
  const candidates = known
    ? [known]
    : (
        await Promise.all(
          (await names(projects)).map(async (project) =>
            (await names(join(projects, project, 'chats'))).map((name) =>
              join(projects, project, 'chats', name),
            ),
          ),
        )
      ).flat();
  for (const path of candidates) {
    const file = basename(path);
    if (!file.startsWith('session-') || !file.endsWith(suffix)) continue;
    let ours: boolean | undefined;
    let lastPrompt = '';
    let responses = new Map<unknown, Record<string, unknown>>();
    for await (const record of records(dirname(path), path)) {
      ours ??= record.sessionId === conversationId;
      if (!ours) break;
      const text = record.type === 'user' ? promptText(record.content) : '';
      if (text.trim() !== '') {
        lastPrompt = text;
        responses = new Map();
      } else if (record.type === 'gemini' && typeof record.tokens === 'object' && record.tokens !== null)
        responses.set(record.id, record.tokens as Record<string, unknown>);
    }
    if (!ours) continue;
    if (!isRunPrompt(lastPrompt, prompt)) return null;
    const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const tokens of responses.values()) {
      const cached = num(tokens.cached);
      usage.inputTokens += Math.max(0, num(tokens.input) - cached);
      usage.outputTokens += num(tokens.output);
      usage.cacheReadTokens += cached;
    }
    return responses.size > 0 ? usage : null;
  }
  return null;
};

/**
 * The note Claude Code logs as the person's when a turn is interrupted (a cancel through the
 * Agent Client Protocol): not a prompt, the turn's responses stay the run's.
 */
const CLAUDE_INTERRUPTED = '[Request interrupted by user';

/**
 * Claude Code: `projects/<folder>/<session id>.jsonl` under CLAUDE_CONFIG_DIR (else ~/.claude).
 * Each assistant record holds its API response's usage (repeated on every record of that
 * response); the run's are those after its prompt, the last person's record, priced from the
 * price table (the file's cost records come only at a run's end).
 */
export const claudeCodeLoggedUsage: LoggedUsage = async ({ env, conversationId, prompt, file }) => {
  const found =
    file ??
    (await findConversationFile(
      'claude-code',
      env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'),
      conversationId,
    ));
  if (found !== null) {
    let lastPrompt = '';
    let responses = new Map<unknown, { model: unknown; usage: Record<string, unknown> }>();
    for await (const record of records(dirname(found), found)) {
      const message = (record.message ?? {}) as Record<string, unknown>;
      const text = record.type === 'user' && record.isMeta !== true ? promptText(message.content) : '';
      if (text.trim() !== '' && !text.startsWith(CLAUDE_INTERRUPTED)) {
        lastPrompt = text;
        responses = new Map();
      } else if (record.type === 'assistant' && typeof message.usage === 'object' && message.usage !== null)
        responses.set(message.id, { model: message.model, usage: message.usage as Record<string, unknown> });
    }
    if (!isRunPrompt(lastPrompt, prompt) || responses.size === 0) return null;
    const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    let cost: number | null = 0;
    for (const { model, usage: one } of responses.values()) {
      const tokens = {
        inputTokens: num(one.input_tokens),
        outputTokens: num(one.output_tokens),
        cacheReadTokens: num(one.cache_read_input_tokens),
        cacheWriteTokens: num(one.cache_creation_input_tokens),
      };
      usage.inputTokens += tokens.inputTokens;
      usage.outputTokens += tokens.outputTokens;
      usage.cacheReadTokens += tokens.cacheReadTokens;
      usage.cacheWriteTokens += tokens.cacheWriteTokens;
      const priced = tokenCost(typeof model === 'string' ? model : undefined, tokens);
      cost = cost === null || priced === null ? null : cost + priced;
    }
    if (cost !== null) usage.costUsd = cost;
    return usage;
  }
  return null;
};
