import { seededRandom } from '../../../seeded-random.js';
import { tokenCost } from '../../../../src-shared/model-prices.js';
import type { AssistantMessage, ContentBlock, Task, Usage } from '../../../../src-shared/sessions.js';
import { collapseWhitespace, makeTitle } from '../../../../src-shared/text.js';
import {
  branchName,
  pause,
  resultMessage,
  type AgentRunner,
  type RunContext,
  type RunOutcome,
} from '../../types.js';

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

const FILES = [
  'src/client.ts',
  'src/server/routes.ts',
  'src/lib/retry.ts',
  'test/client.test.ts',
  'README.md',
  'src/config.ts',
];
const PLANS = [
  ['Read the code involved', 'Reproduce the problem with a test', 'Make the change', 'Run the test suite'],
  ['Find where this lives', 'Write a failing test', 'Fix it', 'Update the docs'],
  ['Survey the module', 'Make the change', 'Add tests for the edge cases'],
];

/**
 * What the agent calls the request in its own sentences: the prompt's first sentence without
 * its full stop (the title rule), with "…" when the rule had to cut it short.
 */
export function subjectOf(prompt: string): string {
  const title = makeTitle(prompt);
  const firstLine = collapseWhitespace(prompt.trim().split(/\r?\n/u)[0] ?? '');
  const sentence = /^.*?[.!?](?=\s|$)/u.exec(firstLine)?.[0] ?? firstLine;
  return sentence.replace(/[\p{P}\s]+$/u, '').length > title.length ? `${title}…` : title;
}

/** A price for models the price table lacks: the usage is simulated, its cost only believable. */
const FALLBACK_PRICED_MODEL = 'claude-sonnet-4-5';

/** Believable tokens and cost for a simulated run of `turns` tool calls, on `model`. */
export function simulatedUsage(rand: () => number, turns: number, model: string): Usage {
  const tokens = {
    inputTokens: 1_500 + Math.floor(rand() * 3_000) + turns * 400,
    outputTokens: 600 + Math.floor(rand() * 1_500) + turns * 250,
    cacheReadTokens: turns * (12_000 + Math.floor(rand() * 8_000)),
    cacheWriteTokens: 6_000 + Math.floor(rand() * 6_000),
  };
  const cost = tokenCost(model, tokens) ?? tokenCost(FALLBACK_PRICED_MODEL, tokens) ?? 0;
  return { ...tokens, costUsd: Math.round(cost * 10_000) / 10_000 };
}

/** Prompts that ask the demo agent to fail, so failure can be shown on purpose. */
export const FAILING_PROMPT = /\b(fail|crash|break)\b/iu;

/**
 * The built-in offline agent: a believable run of thinking, text, a todo list that moves
 * from pending to done, tool calls with their results, a working branch, and a result.
 * No network, no files: it only writes the transcript. Deterministic given its seed and
 * the prompt; `paceMs` spaces the steps so the dashboard shows them arriving.
 */
export function createDemoAgent(options: {
  paceMs: number;
  seed?: number;
  /** Told each run's simulated usage when it ends, to be counted like a real run's. */
  usage?: (sessionId: string, usage: Usage) => Promise<void>;
}): AgentRunner {
  const seedBase = options.seed ?? 1;

  async function play(ctx: RunContext, prompt: string, followUp: boolean): Promise<RunOutcome> {
    const started = Date.now();
    const seed = hash(`${seedBase}:${prompt}`);
    const rand = seededRandom(seed);
    const step = () => pause(options.paceMs, ctx.signal);
    const say = (content: ContentBlock[]): Promise<void> => {
      const message: AssistantMessage = { type: 'assistant', message: { content } };
      return ctx.sink.assistant(message);
    };
    let turns = 0;
    let calls = 0;
    const tool = async (name: string, input: Record<string, unknown>, output: string, isError = false) => {
      calls += 1;
      const id = `toolu_demo_${seed.toString(36)}_${calls}`;
      await say([{ type: 'tool_use', id, name, input }]);
      await step();
      await say([{ type: 'tool_result', tool_use_id: id, content: output, is_error: isError }]);
      turns += 1;
    };
    const fails = FAILING_PROMPT.test(prompt);
    const subject = subjectOf(prompt);
    /** The result, with the run's simulated usage on it and told to whoever counts usage. */
    const finish = async (success: boolean, text: string): Promise<RunOutcome> => {
      const usage = simulatedUsage(rand, turns, ctx.session.model);
      await options.usage?.(ctx.session.id, usage);
      return { result: { ...resultMessage(success, text, Date.now() - started, turns), usage } };
    };

    if (!followUp && ctx.session.repoUrl)
      await ctx.sink.branch(branchName(ctx.session.title, ctx.session.id));
    await step();
    await say([
      {
        type: 'thinking',
        thinking: `The request: "${subject}". Look at the code first, then change as little as possible.`,
      },
      {
        type: 'text',
        text: followUp
          ? `Picking up the follow-up: “${subject}”.`
          : "I'll read the code involved first, then make the change in small steps.",
      },
    ]);
    await step();

    const plan = followUp ? ['Look at the follow-up', 'Make the change'] : pick(rand, PLANS);
    const tasks: Task[] = plan.map((title, i) => ({ id: `task-${i + 1}`, title, status: 'pending' }));
    const todo = async () => {
      await tool(
        'TodoWrite',
        { todos: tasks.map((t) => ({ content: t.title, status: t.status })) },
        'Todos updated',
      );
      await ctx.sink.tasks(tasks.map((t) => ({ ...t })));
    };
    await todo();

    for (const [i, task] of tasks.entries()) {
      task.status = 'in_progress';
      await todo();
      await step();
      const file = pick(rand, FILES);
      if (fails && i === 1) {
        await tool(
          'Bash',
          { command: 'npm test' },
          `FAIL ${file}\n  ✕ the demo agent was asked to fail (${Math.floor(rand() * 900) + 100} ms)`,
          true,
        );
        return finish(
          false,
          `The tests failed after “${task.title}”. The demo agent fails on purpose when a prompt asks it to.`,
        );
      }
      if (i % 2 === 0) {
        const lines = Array.from(
          { length: 8 + Math.floor(rand() * 30) },
          (_, n) => `${String(n + 1).padStart(3)}  // ${file}: line ${n + 1}`,
        );
        await tool('Read', { file_path: file }, lines.join('\n'));
      } else {
        await tool(
          'Edit',
          {
            file_path: file,
            old_string: 'retries = 0',
            new_string: `retries = ${1 + Math.floor(rand() * 4)}`,
          },
          `Edited ${file}`,
        );
      }
      task.status = 'completed';
      await step();
    }
    await todo();
    await tool('Bash', { command: 'npm test' }, `Tests: ${20 + Math.floor(rand() * 80)} passed, 0 failed`);
    await say([
      {
        type: 'text',
        text: `Done. The change is small:\n\n\`\`\`ts\nconst retries = ${1 + Math.floor(rand() * 4)};\n\`\`\`\n\nThe tests pass.`,
      },
    ]);
    turns += 1;
    return finish(true, `Finished: ${subject}`);
  }

  return {
    kind: 'demo',
    start: (ctx, prompt) => play(ctx, prompt ?? ctx.session.title, false),
    followUp: (ctx, text) => play(ctx, text, true),
  };
}
