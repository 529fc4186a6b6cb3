import { newId } from '../../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import type { Message } from '../../src-shared/sessions.js';

export interface LongSessionOptions {
  /** Messages in all, the prompt and the closing result included. */
  messages: number;
  /** Characters of each tool result (a file's contents, as an agent reads them). */
  resultChars: number;
  /**
   * A call whose result is the message at this index and the call the message before:
   * where the dashboard's first page of a transcript begins, they are read apart.
   */
  pairAt: number;
  /** Tool results far larger than the rest (whole generated files, logs): at these indices (3 mod 4). */
  hugeResults?: { at: number[]; chars: number };
}

export interface LongSession {
  sessionId: string;
  messages: number;
  /** The JSON bytes of its messages. */
  bytes: number;
}

export const BOUNDARY_PATTERN = 'page boundary marker';
export const BOUNDARY_OUTPUT = 'src/pages.ts:12: the page boundary marker is here';

/** The text of step `i`, so a test can find where it is. */
export const stepText = (i: number) => `Step ${i}: checked the module and moved on.`;

function fileContents(i: number, chars: number): string {
  const line = `export const value${i % 97} = compute(${i}); // line of module ${i}\n`;
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
}

/** Message `i` of a coding agent's long run: text, a tool call, its result, thinking, in turn. */
function step(i: number, options: LongSessionOptions): Message {
  if (i === options.pairAt - 1) {
    return {
      type: 'assistant',
      message: {
        content: [
          { type: 'tool_use', id: 'toolu_boundary', name: 'Grep', input: { pattern: BOUNDARY_PATTERN } },
        ],
      },
    };
  }
  if (i === options.pairAt) {
    return {
      type: 'assistant',
      message: {
        content: [{ type: 'tool_result', tool_use_id: 'toolu_boundary', content: BOUNDARY_OUTPUT }],
      },
    };
  }
  switch (i % 4) {
    case 1:
      return { type: 'assistant', message: { content: [{ type: 'text', text: stepText(i) }] } };
    case 2:
      return {
        type: 'assistant',
        message: {
          content: [
            { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `src/module-${i}.ts` } },
          ],
        },
      };
    case 3:
      return {
        type: 'assistant',
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: `toolu_${i - 1}`,
              content: fileContents(
                i,
                options.hugeResults?.at.includes(i) ? options.hugeResults.chars : options.resultChars,
              ),
            },
          ],
        },
      };
    default:
      return {
        type: 'assistant',
        message: { content: [{ type: 'thinking', thinking: `Module ${i} looks right; next one.` }] },
      };
  }
}

/**
 * Adds a completed session of `options.messages` messages to the first workspace of a data
 * directory, through the store and repositories the server itself uses.
 */
export async function seedLongSession(
  dataDir: string,
  owner: { email: string; organizationId: string },
  options: LongSessionOptions,
): Promise<LongSession> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const repos = createRepositories(store.db);
    const user = repos.users.findByEmail(owner.email);
    if (!user) throw new Error(`no user ${owner.email}`);
    const sessionId = newId('session');
    const at = new Date().toISOString();
    const prompt = 'Review every module of the parser and fix what is wrong.';
    let bytes = JSON.stringify({ type: 'user', message: { content: prompt } }).length;
    await store.write(() =>
      repos.sessions.insert({
        id: sessionId,
        workspaceId: owner.organizationId,
        authorId: user.id,
        title: 'Review every module of the parser',
        model: 'claude-opus-4-6',
        createdAt: at,
        baseBranch: 'main',
        initialMessage: prompt,
      }),
    );
    const last = options.messages - 1;
    for (let from = 1; from <= last; from += 500) {
      const batch: Message[] = [];
      for (let i = from; i < Math.min(from + 500, last); i += 1) batch.push(step(i, options));
      if (from + 500 > last) {
        batch.push({
          type: 'result',
          subtype: 'success',
          is_error: false,
          result: `Reviewed ${last} steps; the parser is fixed.`,
          duration_ms: 3_600_000,
          num_turns: last,
        });
      }
      for (const message of batch) bytes += JSON.stringify(message).length;
      await store.write(() => {
        for (const message of batch)
          repos.sessions.appendMessage(sessionId, owner.organizationId, message, null, at);
      });
    }
    await store.write(() => repos.sessions.update(sessionId, { status: 'completed' }, at));
    return { sessionId, messages: options.messages, bytes };
  } finally {
    await store.close();
  }
}
