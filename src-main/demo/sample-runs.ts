import type { AssistantMessage, ContentBlock, ResultMessage, Task } from '../../src-shared/sessions.js';
import { FAILING_PROMPT, hash, simulatedUsage, subjectOf } from '../agents/kinds/demo/demo-agent.js';
import { resultMessage } from '../agents/types.js';
import { seededRandom } from '../seeded-random.js';

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

/** A sample session's run: its transcript, each task list it wrote (with the transcript's length then), its result. */
export interface SampleRun {
  messages: AssistantMessage[];
  tasks: Task[];
  taskLists: { messageCount: number; tasks: Task[] }[];
  result: ResultMessage;
}

/**
 * The transcript of a sample session of the demo workspace: a run of thinking, text, a todo
 * list that moves from pending to done, tool calls with their results and a result, as the
 * demo agent tells a run, in a repository of the sample workspace's people. Nothing runs and
 * no folder is made: these sessions are the workspace's history. Deterministic given the seed
 * and the prompt.
 */
export function sampleRun(prompt: string, model: string, seedBase = 7): SampleRun {
  const seed = hash(`${seedBase}:${prompt}`);
  const rand = seededRandom(seed);
  const messages: AssistantMessage[] = [];
  const taskLists: SampleRun['taskLists'] = [];
  const say = (content: ContentBlock[]) => void messages.push({ type: 'assistant', message: { content } });
  let turns = 0;
  let calls = 0;
  const tool = (name: string, input: Record<string, unknown>, output: string, isError = false) => {
    calls += 1;
    const id = `toolu_demo_${seed.toString(36)}_${calls}`;
    say([{ type: 'tool_use', id, name, input }]);
    say([{ type: 'tool_result', tool_use_id: id, content: output, is_error: isError }]);
    turns += 1;
  };
  const subject = subjectOf(prompt);
  const finish = (success: boolean, text: string): SampleRun => {
    const usage = simulatedUsage(rand, turns, model);
    return {
      messages,
      tasks: taskLists.at(-1)?.tasks ?? [],
      taskLists,
      result: { ...resultMessage(success, text, 20_000 * (messages.length + 1), turns), usage },
    };
  };

  say([
    {
      type: 'thinking',
      thinking: `The request: "${subject}". Look at the code first, then change as little as possible.`,
    },
    { type: 'text', text: "I'll read the code involved first, then make the change in small steps." },
  ]);
  const tasks: Task[] = pick(rand, PLANS).map((title, i) => ({
    id: `task-${i + 1}`,
    title,
    status: 'pending',
  }));
  const todo = () => {
    tool('TodoWrite', { todos: tasks.map((t) => ({ content: t.title, status: t.status })) }, 'Todos updated');
    taskLists.push({ messageCount: messages.length, tasks: tasks.map((t) => ({ ...t })) });
  };
  todo();
  for (const [i, task] of tasks.entries()) {
    task.status = 'in_progress';
    todo();
    const file = pick(rand, FILES);
    if (FAILING_PROMPT.test(prompt) && i === 1) {
      tool(
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
      tool('Read', { file_path: file }, lines.join('\n'));
    } else {
      tool(
        'Edit',
        { file_path: file, old_string: 'retries = 0', new_string: `retries = ${1 + Math.floor(rand() * 4)}` },
        `Edited ${file}`,
      );
    }
    task.status = 'completed';
  }
  todo();
  tool('Bash', { command: 'npm test' }, `Tests: ${20 + Math.floor(rand() * 80)} passed, 0 failed`);
  say([
    {
      type: 'text',
      text: `Done. The change is small:\n\n\`\`\`ts\nconst retries = ${1 + Math.floor(rand() * 4)};\n\`\`\`\n\nThe tests pass.`,
    },
  ]);
  turns += 1;
  return finish(true, `Finished: ${subject}`);
}
