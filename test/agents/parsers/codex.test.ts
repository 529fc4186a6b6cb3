import { describe, expect, it } from 'vitest';
import {
  UNFINISHED_TOOL_RESULT,
  type AgentEvent,
  type AgentUsage,
} from '../../../src-main/agents/agent-events.js';
import { createCodexParser } from '../../../src-main/agents/kinds/codex/parse.js';
import { fixtureLines, fixtureRecords, recordedScenarios, recordedVersions, replay } from './replay.js';

const KIND = 'codex';
const startsRun = (line: string) => line.includes('"type":"thread.started"');

const usage = (input: number, output: number, cacheRead = 0): AgentEvent => ({
  kind: 'usage',
  usage: { inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: 0 },
});

const success = (text: string, turns: number): AgentEvent => ({
  kind: 'result',
  result: {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: text,
    duration_ms: 0,
    num_turns: turns,
  },
});

const say = (text: string): AgentEvent => ({ kind: 'assistant', content: [{ type: 'text', text }] });
const think = (thinking: string): AgentEvent => ({
  kind: 'assistant',
  content: [{ type: 'thinking', thinking }],
});

describe.each(recordedVersions(KIND))('Codex %s recordings', (version) => {
  const run = (scenario: string, parser = () => createCodexParser()) =>
    replay(fixtureLines(KIND, version, scenario), parser, startsRun);
  const threadId = (scenario: string) =>
    fixtureRecords(KIND, version, scenario, (r) => r.type === 'thread.started')[0]!.thread_id as string;

  it('has every scenario recorded', () => {
    expect(recordedScenarios(KIND, version).sort()).toEqual([
      'edit-and-commit',
      'error-retry',
      'mcp-tool-call',
      'plain-answer',
      'resume',
      'todo-list',
    ]);
  });

  it('plain answer: thread id, reasoning as thinking, the message, usage, success', () => {
    expect(run('plain-answer')).toEqual([
      [
        { kind: 'conversation', id: threadId('plain-answer') },
        think('The user wants a greeting.'),
        say('Hello from the scripted model.'),
        // 1200 input tokens of which 1000 cached: 200 fresh.
        usage(200, 40, 1000),
        success('Hello from the scripted model.', 1),
      ],
    ]);
  });

  it('a file change and a command become tool calls paired with their results', () => {
    const [events] = run('edit-and-commit');
    const notes = expect.stringMatching(/\/repo\/NOTES\.md$/u) as string;
    expect(events).toEqual([
      { kind: 'conversation', id: threadId('edit-and-commit') },
      think('Create the notes file first.'),
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'item_1',
            name: 'apply_patch',
            input: { changes: [{ path: notes, kind: 'add' }] },
          },
        ],
      },
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'item_1',
            content: expect.stringMatching(/^add \/.*NOTES\.md$/u),
            is_error: false,
          },
        ],
      },
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'item_2',
            name: 'shell',
            input: { command: `/bin/bash -lc 'git add NOTES.md && git commit -q -m "Add notes"'` },
          },
        ],
      },
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 'item_2', content: '', is_error: false }],
      },
      say('Committed NOTES.md.'),
      // Three requests: 1500 + 1700 + 1800 in (1200 + 1500 + 1700 cached), 60 + 30 + 10 out.
      usage(600, 100, 4400),
      success('Committed NOTES.md.', 3),
    ]);
  });

  it('the to-do list becomes tasks, updated in place; a web search is a tool call', () => {
    const [events] = run('todo-list');
    expect(events!.filter((e) => e.kind === 'tasks').map((e) => e.tasks)).toEqual([
      [
        { id: 'todo-1', title: 'Write the notes', status: 'pending' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
      ],
      [
        { id: 'todo-1', title: 'Write the notes', status: 'completed' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
      ],
    ]);
    expect(events!.filter((e) => e.kind === 'assistant')).toEqual([
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'ws_0_2',
            name: 'web_search',
            input: { query: 'vitest run one file', action: { type: 'search', query: 'vitest run one file' } },
          },
        ],
      },
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'ws_0_2',
            content: 'Searched the web for: vitest run one file',
            is_error: false,
          },
        ],
      },
      say('Notes written; tests are running.'),
    ]);
    expect(events!.at(-1)).toEqual(success('Notes written; tests are running.', 2));
  });

  it('MCP tool calls become tool calls named after server and tool, a failed one an error', () => {
    const use = (id: string, input: unknown): AgentEvent => ({
      kind: 'assistant',
      content: [{ type: 'tool_use', id, name: 'mcp:notes/lookup', input }],
    });
    const outcome = (id: string, text: string, isError: boolean): AgentEvent => ({
      kind: 'assistant',
      content: [
        { type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }], is_error: isError },
      ],
    });
    expect(run('mcp-tool-call')).toEqual([
      [
        { kind: 'conversation', id: threadId('mcp-tool-call') },
        use('item_0', { topic: 'releases' }),
        outcome('item_0', 'Note on releases: ship on Fridays.', false),
        use('item_1', { topic: 'nothing', fail: true }),
        outcome('item_1', 'No such topic.', true),
        say('Releases ship on Fridays.'),
        // Four requests: 650 + 700 + 750 + 800 in (0 + 650 + 700 + 750 cached), 15 + 20 + 20 + 8 out.
        usage(800, 63, 2100),
        success('Releases ship on Fridays.', 3),
      ],
    ]);
  });

  it('shows each retry as an error notice and ends with the failure', () => {
    const [events] = run('error-retry');
    const errors = fixtureRecords(KIND, version, 'error-retry', (r) => r.type === 'error').map(
      (r) => r.message,
    );
    expect(errors).toHaveLength(3);
    expect(events).toEqual([
      { kind: 'conversation', id: threadId('error-retry') },
      ...errors.map((text) => ({ kind: 'notice', level: 'error', text })),
      {
        kind: 'result',
        result: {
          type: 'result',
          subtype: 'error',
          is_error: true,
          result: errors[2],
          duration_ms: 0,
          num_turns: 0,
        },
        errorSubtype: 'turn_failed',
      },
    ]);
    expect(errors[0]).toMatch(/^Reconnecting\.\.\. 1\/2/u);
  });

  it('a resumed run continues the thread; its usage counts only its own requests given the earlier total', () => {
    const id = threadId('resume');
    const first = run('resume')[0]!;
    expect(first).toEqual([
      { kind: 'conversation', id },
      say('Remembered: the colour is teal.'),
      usage(800, 9),
      success('Remembered: the colour is teal.', 1),
    ]);
    const before = (first.find((e) => e.kind === 'usage') as { usage: AgentUsage }).usage;
    const [, second] = run('resume', () => createCodexParser({ usageBefore: before }));
    expect(second).toEqual([
      { kind: 'conversation', id },
      say('You told me the colour is teal.'),
      // The second request: 850 in, 800 of them cached, 10 out.
      usage(50, 10, 800),
      success('You told me the colour is teal.', 1),
    ]);
    // Without the earlier total the thread's totals are all there is.
    expect(run('resume')[1]).toContainEqual(usage(850, 19, 800));
  });
});

describe('Codex parser', () => {
  const item = (event: string, fields: Record<string, unknown>) =>
    JSON.stringify({ type: event, item: fields });

  it('maps an MCP tool call and its failure; closes a command left running at the end', () => {
    const parser = createCodexParser();
    const call = {
      id: 'item_5',
      type: 'mcp_tool_call',
      server: 'docs',
      tool: 'search',
      arguments: { q: 'x' },
    };
    expect(
      parser.line(item('item.started', { ...call, result: null, error: null, status: 'in_progress' })),
    ).toEqual([
      {
        kind: 'assistant',
        content: [{ type: 'tool_use', id: 'item_5', name: 'mcp:docs/search', input: { q: 'x' } }],
      },
    ]);
    expect(
      parser.line(
        item('item.completed', { ...call, result: null, error: { message: 'timed out' }, status: 'failed' }),
      ),
    ).toEqual([
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 'item_5', content: 'timed out', is_error: true }],
      },
    ]);
    const command = { id: 'item_6', type: 'command_execution', command: 'sleep 100', aggregated_output: '' };
    parser.line(item('item.started', { ...command, exit_code: null, status: 'in_progress' }));
    expect(parser.end()).toEqual([
      {
        kind: 'assistant',
        content: [
          { type: 'tool_result', tool_use_id: 'item_6', content: UNFINISHED_TOOL_RESULT, is_error: true },
        ],
      },
    ]);
  });

  it('marks a failing command as an error; keeps an error item and unknown lines as notices', () => {
    const parser = createCodexParser();
    const done = {
      id: 'item_1',
      type: 'command_execution',
      command: 'false',
      aggregated_output: 'nope',
      exit_code: 1,
    };
    expect(parser.line(item('item.completed', { ...done, status: 'failed' }))).toEqual([
      {
        kind: 'assistant',
        content: [{ type: 'tool_use', id: 'item_1', name: 'shell', input: { command: 'false' } }],
      },
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 'item_1', content: 'nope', is_error: true }],
      },
    ]);
    expect(
      parser.line(item('item.completed', { id: 'item_2', type: 'error', message: 'model metadata missing' })),
    ).toEqual([{ kind: 'notice', level: 'error', text: 'model metadata missing' }]);
    expect(parser.line('{"type":"request_user_input","id":"t","call_id":"c","questions":[]}')).toEqual([
      {
        kind: 'notice',
        level: 'info',
        text: '{"type":"request_user_input","id":"t","call_id":"c","questions":[]}',
      },
    ]);
  });

  it('a collab call (a Codex sub-agent) is a tool call whose result is the agents’ last state', () => {
    const parser = createCodexParser();
    const call = {
      id: 'item_3',
      type: 'collab_tool_call',
      tool: 'spawn_agent',
      sender_thread_id: 'main',
      receiver_thread_ids: ['child'],
      prompt: 'Check the tests',
    };
    expect(parser.line(item('item.started', { ...call, agents_states: {}, status: 'in_progress' }))).toEqual([
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'item_3',
            name: 'agent:spawn_agent',
            input: { prompt: 'Check the tests', receivers: ['child'] },
          },
        ],
      },
    ]);
    const states = { child: { status: 'completed', message: 'All green' } };
    expect(
      parser.line(item('item.completed', { ...call, agents_states: states, status: 'completed' })),
    ).toEqual([
      {
        kind: 'assistant',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'item_3',
            content: 'child: completed — All green',
            is_error: false,
          },
        ],
      },
    ]);
  });

  it('keeps a message cut off by the end of the run', () => {
    const parser = createCodexParser();
    parser.line(item('item.updated', { id: 'item_1', type: 'agent_message', text: 'Half a sent' }));
    expect(parser.end()).toEqual([say('Half a sent')]);
  });
});
