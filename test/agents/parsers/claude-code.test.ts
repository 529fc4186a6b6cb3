import { describe, expect, it } from 'vitest';
import { UNFINISHED_TOOL_RESULT, type AgentEvent } from '../../../src-main/agents/agent-events.js';
import { createClaudeCodeParser } from '../../../src-main/agents/kinds/claude-code/parse.js';
import { fixtureLines, fixtureRecords, recordedScenarios, recordedVersions, replay } from './replay.js';

const KIND = 'claude-code';
const startsRun = (line: string) => line.includes('"type":"system"') && line.includes('"subtype":"init"');

// Claude Sonnet 4.5 list prices per token, as the CLI applies them to the scripted usage.
const PRICE = { input: 3e-6, output: 15e-6, cacheRead: 0.3e-6, cacheWrite: 3.75e-6 };

function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0): AgentEvent {
  const cost =
    input * PRICE.input + output * PRICE.output + cacheRead * PRICE.cacheRead + cacheWrite * PRICE.cacheWrite;
  return {
    kind: 'usage',
    usage: {
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      costUsd: expect.closeTo(cost, 12) as number,
    },
  };
}

function result(success: boolean, text: string, turns: number, errorSubtype?: string): AgentEvent {
  const event: AgentEvent = {
    kind: 'result',
    result: {
      type: 'result',
      subtype: success ? 'success' : 'error',
      is_error: !success,
      result: text,
      duration_ms: expect.any(Number) as number,
      num_turns: turns,
    },
  };
  return errorSubtype ? { ...event, errorSubtype } : event;
}

const text = (t: string, parentToolUseId?: string): AgentEvent =>
  parentToolUseId
    ? { kind: 'assistant', content: [{ type: 'text', text: t }], parentToolUseId }
    : { kind: 'assistant', content: [{ type: 'text', text: t }] };

const toolUse = (id: string, name: string, input: unknown, parentToolUseId?: string): AgentEvent => {
  const content = [{ type: 'tool_use' as const, id, name, input }];
  return parentToolUseId ? { kind: 'assistant', content, parentToolUseId } : { kind: 'assistant', content };
};

const toolResult = (id: string, content: unknown, parentToolUseId?: string): AgentEvent => {
  const block = expect.objectContaining({ type: 'tool_result', tool_use_id: id, content }) as never;
  return parentToolUseId
    ? { kind: 'assistant', content: [block], parentToolUseId }
    : { kind: 'assistant', content: [block] };
};

/** Without the usage reported as the run goes: the result line's usage replaces it. */
const withoutRunningUsage = (events: AgentEvent[]) =>
  events.filter((e, i) => e.kind !== 'usage' || events[i + 1]?.kind === 'result');

describe.each(recordedVersions(KIND))('Claude Code %s recordings', (version) => {
  const runWithRunningUsage = (scenario: string) =>
    replay(fixtureLines(KIND, version, scenario), createClaudeCodeParser, startsRun);
  const run = (scenario: string) => runWithRunningUsage(scenario).map(withoutRunningUsage);
  const sessionId = (scenario: string) =>
    fixtureRecords(KIND, version, scenario, (r) => r.type === 'system' && r.subtype === 'init')[0]!
      .session_id as string;

  it('has every scenario recorded', () => {
    expect(recordedScenarios(KIND, version).sort()).toEqual([
      'api-retry',
      'edit-and-commit',
      'error-api',
      'error-auth',
      'error-max-turns',
      'plain-answer',
      'resume',
      'sub-agent',
      'task-tracking',
      'todo-write',
      'todo-write-rejected',
    ]);
  });

  it('plain answer: conversation id, thinking and text, usage with cost, success', () => {
    expect(run('plain-answer')).toEqual([
      [
        { kind: 'conversation', id: sessionId('plain-answer') },
        {
          kind: 'assistant',
          content: [{ type: 'thinking', thinking: 'The user wants a greeting.', signature: 'sig_0_0_0' }],
        },
        text('Hello from the scripted model.'),
        usage(120, 14, 30, 40),
        result(true, 'Hello from the scripted model.', 1),
      ],
    ]);
  });

  it('edits a file, commits with Bash, and pairs every tool call with its result', () => {
    expect(run('edit-and-commit')).toEqual([
      [
        { kind: 'conversation', id: sessionId('edit-and-commit') },
        text('I will write the notes file.'),
        toolUse('toolu_0_0_1', 'Write', { file_path: 'NOTES.md', content: 'First line\n' }),
        toolResult('toolu_0_0_1', expect.stringContaining('File created successfully at: NOTES.md')),
        toolUse('toolu_0_1_0', 'Edit', {
          replace_all: false,
          file_path: 'NOTES.md',
          old_string: 'First line',
          new_string: 'First line, edited',
        }),
        toolResult('toolu_0_1_0', expect.stringContaining('NOTES.md has been updated')),
        toolUse('toolu_0_2_0', 'Bash', {
          command: 'git add NOTES.md && git commit -q -m "Add notes"',
          description: 'Commit the notes',
        }),
        toolResult('toolu_0_2_0', '(Bash completed with no output)'),
        text('Committed NOTES.md.'),
        usage(1100, 83, 760),
        result(true, 'Committed NOTES.md.', 4),
      ],
    ]);
  });

  it('builds the task list from TaskCreate results and TaskUpdate calls, and closes it at the end', () => {
    const [events] = run('task-tracking');
    const taskLists = events!.filter((e) => e.kind === 'tasks').map((e) => e.tasks);
    expect(taskLists).toEqual([
      [{ id: '1', title: 'Write the notes', status: 'pending' }],
      [
        { id: '1', title: 'Write the notes', status: 'pending' },
        { id: '2', title: 'Run the tests', status: 'pending' },
      ],
      [
        { id: '1', title: 'Write the notes', status: 'in_progress' },
        { id: '2', title: 'Run the tests', status: 'pending' },
      ],
      [
        { id: '1', title: 'Write the notes', status: 'completed' },
        { id: '2', title: 'Run the tests', status: 'pending' },
      ],
      [
        { id: '1', title: 'Write the notes', status: 'completed' },
        { id: '2', title: 'Run the tests', status: 'in_progress' },
      ],
      // The run is over: the task left under way is no longer in progress.
      [
        { id: '1', title: 'Write the notes', status: 'completed' },
        { id: '2', title: 'Run the tests', status: 'pending' },
      ],
    ]);
    expect(events!.at(-3)).toEqual(usage(990, 85));
    expect(events!.at(-2)).toEqual(result(true, 'Notes written; tests are running.', 6));
  });

  it('turns a TodoWrite list into tasks, and closes the one under way at the end', () => {
    const [events] = run('todo-write');
    expect(events!.filter((e) => e.kind === 'tasks')).toEqual([
      {
        kind: 'tasks',
        tasks: [
          { id: 'task-1', title: 'Write the notes', status: 'in_progress' },
          { id: 'task-2', title: 'Run the tests', status: 'pending' },
        ],
      },
      {
        kind: 'tasks',
        tasks: [
          { id: 'task-1', title: 'Write the notes', status: 'pending' },
          { id: 'task-2', title: 'Run the tests', status: 'pending' },
        ],
      },
    ]);
    expect(events!.at(-2)).toEqual(result(true, 'Writing the notes now.', 2));
  });

  it('keeps the list of a TodoWrite the CLI accepted, not of one it refused', () => {
    const [events] = run('todo-write-rejected');
    const refused = fixtureRecords(KIND, version, 'todo-write-rejected', (r) =>
      JSON.stringify(r).includes('InputValidationError'),
    );
    expect(refused).toHaveLength(1);
    expect(events!.filter((e) => e.kind === 'tasks')).toEqual([
      {
        kind: 'tasks',
        tasks: [
          { id: 'task-1', title: 'Write the notes', status: 'in_progress' },
          { id: 'task-2', title: 'Run the tests', status: 'pending' },
        ],
      },
      // The run is over: the task left under way is no longer in progress.
      {
        kind: 'tasks',
        tasks: [
          { id: 'task-1', title: 'Write the notes', status: 'pending' },
          { id: 'task-2', title: 'Run the tests', status: 'pending' },
        ],
      },
    ]);
  });

  it('keeps a sub-agent’s messages, marked with the call that started it', () => {
    const child = 'toolu_1_0_0';
    expect(run('sub-agent')).toEqual([
      [
        { kind: 'conversation', id: sessionId('sub-agent') },
        toolUse(child, 'Agent', {
          description: 'List the files',
          prompt: 'List the files in the repository. SUBAGENT-CHILD',
          subagent_type: 'general-purpose',
          run_in_background: false,
        }),
        text('Looking at the files.', child),
        toolUse('toolu_0_0_1', 'Bash', { command: 'ls', description: 'List files' }, child),
        toolResult('toolu_0_0_1', 'README.md', child),
        text('The repository holds README.md.', child),
        toolResult(child, [expect.objectContaining({ text: expect.stringContaining('README.md') })]),
        text('The helper found README.md.'),
        // The sub-agent's tokens (90 + 110 in, 15 + 10 out) count with the main thread's.
        usage(600, 69),
        result(true, 'The helper found README.md.', 2),
      ],
    ]);
  });

  it('keeps error_max_turns as the error subtype', () => {
    const [events] = run('error-max-turns');
    expect(events!.slice(-2)).toEqual([
      usage(100, 12),
      result(false, 'Reached maximum number of turns (1)', 2, 'error_max_turns'),
    ]);
  });

  it('reports an API error as an error result with its terminal reason', () => {
    const [events] = run('error-api');
    const message = expect.stringContaining('Prompt is too long') as string;
    expect(events).toEqual([
      { kind: 'conversation', id: sessionId('error-api') },
      // The CLI's words in the model's place (model "<synthetic>"): an error, not an answer.
      { kind: 'notice', level: 'error', text: message },
      {
        kind: 'usage',
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
      },
      result(false, message, 1, 'prompt_too_long'),
    ]);
  });

  it('shows a refused API key as an error, not as the model speaking', () => {
    const [events] = run('error-auth');
    const [synthetic] = fixtureRecords(KIND, version, 'error-auth', (r) => r.type === 'assistant');
    expect((synthetic!.message as { model: string }).model).toBe('<synthetic>');
    expect(events!.filter((e) => e.kind === 'assistant')).toEqual([]);
    expect(events).toContainEqual({
      kind: 'notice',
      level: 'error',
      text: 'Invalid API key · Fix external API key',
    });
    expect(events!.at(-1)).toEqual(result(false, 'Invalid API key · Fix external API key', 1, 'api_error'));
  });

  it('shows each API retry as an error notice as it happens, then the failure', () => {
    const [events] = run('api-retry');
    const retries = fixtureRecords(KIND, version, 'api-retry', (r) => r.subtype === 'api_retry');
    expect(retries).toHaveLength(2);
    const message = expect.stringContaining('529 the scripted server is overloaded') as string;
    expect(events).toEqual([
      { kind: 'conversation', id: sessionId('api-retry') },
      ...retries.map((r) => ({
        kind: 'notice',
        level: 'error',
        text: `API error 529 (overloaded); retry ${String(r.attempt)} of 2 in ${Math.round((r.retry_delay_ms as number) / 100) / 10} s`,
      })),
      { kind: 'notice', level: 'error', text: message },
      {
        kind: 'usage',
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
      },
      result(false, message, 1, 'api_error'),
    ]);
  });

  it('resumes the same conversation, and counts each run’s own usage and cost', () => {
    const runs = run('resume');
    const id = sessionId('resume');
    expect(runs).toEqual([
      [
        { kind: 'conversation', id },
        text('Remembered: the colour is teal.'),
        usage(80, 9),
        result(true, 'Remembered: the colour is teal.', 1),
      ],
      [
        { kind: 'conversation', id },
        text('You told me the colour is teal.'),
        // total_cost_usd in this run's line covers both runs; the event counts this one only.
        usage(120, 10, 80),
        result(true, 'You told me the colour is teal.', 1),
      ],
    ]);
    const [, second] = fixtureRecords(KIND, version, 'resume', (r) => r.type === 'result');
    expect(second!.total_cost_usd).toBeCloseTo(
      80 * 3e-6 + 9 * 15e-6 + 120 * 3e-6 + 10 * 15e-6 + 80 * 0.3e-6,
      12,
    );
  });

  it('reports usage as each API response starts, priced, until the result line gives the run’s own', () => {
    const [events] = runWithRunningUsage('edit-and-commit');
    // Each response's usage as it started (output 1), summed over the responses so far.
    expect(events!.filter((e) => e.kind === 'usage')).toEqual([
      usage(200, 1),
      usage(460, 2, 200),
      usage(760, 3, 460),
      usage(1100, 4, 760),
      usage(1100, 83, 760),
    ]);
    expect(events!.at(-1)).toMatchObject({ kind: 'result' });
  });

  it('takes usage from `usage` and `total_cost_usd` when the per-run breakdown is missing', () => {
    const [line] = fixtureRecords(KIND, version, 'plain-answer', (r) => r.type === 'result');
    delete line!.model_usage_since_last_result;
    const events = createClaudeCodeParser().line(JSON.stringify(line));
    expect(events.find((e) => e.kind === 'usage')).toEqual(usage(120, 14, 30, 40));
  });
});

describe('Claude Code parser', () => {
  it('closes tool calls left open when the run ends, under their own parent', () => {
    const parser = createClaudeCodeParser();
    const assistant = (content: unknown[], parent: string | null) =>
      JSON.stringify({
        type: 'assistant',
        message: { content },
        parent_tool_use_id: parent,
        session_id: 's1',
      });
    parser.line(assistant([{ type: 'tool_use', id: 'a', name: 'Agent', input: {} }], null));
    parser.line(
      assistant([{ type: 'tool_use', id: 'b', name: 'Bash', input: { command: 'sleep 100' } }], 'a'),
    );
    expect(parser.end()).toEqual([
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: UNFINISHED_TOOL_RESULT, is_error: true }],
      },
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 'b', content: UNFINISHED_TOOL_RESULT, is_error: true }],
        parentToolUseId: 'a',
      },
    ]);
  });

  it('turns TodoWrite lists into tasks once the CLI has accepted them', () => {
    const parser = createClaudeCodeParser();
    const line = JSON.stringify({
      type: 'assistant',
      message: {
        content: [
          {
            type: 'tool_use',
            id: 't1',
            name: 'TodoWrite',
            input: {
              todos: [
                { content: 'Edit NOTES.md', status: 'completed', activeForm: 'Editing' },
                { content: 'Commit', status: 'in_progress', activeForm: 'Committing' },
              ],
            },
          },
        ],
      },
    });
    expect(parser.line(line).filter((e) => e.kind === 'tasks')).toEqual([]);
    const accepted = JSON.stringify({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Todos have been modified' }] },
    });
    expect(parser.line(accepted).filter((e) => e.kind === 'tasks')).toEqual([
      {
        kind: 'tasks',
        tasks: [
          { id: 'task-1', title: 'Edit NOTES.md', status: 'completed' },
          { id: 'task-2', title: 'Commit', status: 'in_progress' },
        ],
      },
    ]);
  });

  it('shows retries, unknown system lines and plain text as notices; stays quiet on blank lines', () => {
    const parser = createClaudeCodeParser();
    const retry = {
      type: 'system',
      subtype: 'api_retry',
      attempt: 2,
      max_retries: 10,
      retry_delay_ms: 1500,
      error_status: 529,
      error: 'overloaded_error',
    };
    expect(parser.line(JSON.stringify(retry))).toEqual([
      { kind: 'notice', level: 'error', text: 'API error 529 (overloaded_error); retry 2 of 10 in 1.5 s' },
    ]);
    expect(
      parser.line(JSON.stringify({ type: 'system', subtype: 'model_fallback', message: 'Using Haiku' })),
    ).toEqual([{ kind: 'notice', level: 'info', text: 'model_fallback: Using Haiku' }]);
    expect(parser.line('Error: invalid API key')).toEqual([
      { kind: 'notice', level: 'info', text: 'Error: invalid API key' },
    ]);
    expect(parser.line(JSON.stringify({ type: 'error', message: 'boom' }))).toEqual([
      { kind: 'notice', level: 'error', text: '{"type":"error","message":"boom"}' },
    ]);
    expect(parser.line('   ')).toEqual([]);
  });

  it('shows server-side web searches as tool calls, and other unknown blocks as notices', () => {
    const parser = createClaudeCodeParser();
    const line = JSON.stringify({
      type: 'assistant',
      message: {
        content: [
          { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'vitest' } },
          {
            type: 'web_search_tool_result',
            tool_use_id: 'srv_1',
            content: [{ type: 'web_search_result', url: 'u' }],
          },
          { type: 'redacted_thinking', data: 'xyz' },
          { type: 'image', source: { type: 'base64', data: 'AAAA' } },
        ],
      },
    });
    expect(parser.line(line)).toEqual([
      {
        kind: 'assistant',
        content: [
          { type: 'tool_use', id: 'srv_1', name: 'web_search', input: { query: 'vitest' } },
          { type: 'tool_result', tool_use_id: 'srv_1', content: [{ type: 'web_search_result', url: 'u' }] },
        ],
      },
      {
        kind: 'notice',
        level: 'info',
        text: 'Unshown content: {"type":"image","source":{"type":"base64","data":"AAAA"}}',
      },
    ]);
    expect(parser.end()).toEqual([]);
  });

  it('never takes a person’s text from a user line as the agent’s', () => {
    const parser = createClaudeCodeParser();
    const line = JSON.stringify({ type: 'user', message: { content: [{ type: 'text', text: 'do it' }] } });
    expect(parser.line(line)).toEqual([]);
  });
});
