import { describe, expect, it } from 'vitest';
import { UNFINISHED_TOOL_RESULT, type AgentEvent } from '../../../src-main/agents/agent-events.js';
import { createGeminiParser, geminiStderrEvents } from '../../../src-main/agents/kinds/gemini/parse.js';
import {
  fixtureFile,
  fixtureLines,
  fixtureRecords,
  recordedScenarios,
  recordedVersions,
  replay,
} from './replay.js';

const KIND = 'gemini';
const startsRun = (line: string) => line.includes('"type":"init"');

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
    duration_ms: expect.any(Number) as number,
    num_turns: turns,
  },
});

const say = (text: string): AgentEvent => ({ kind: 'assistant', content: [{ type: 'text', text }] });

describe.each(recordedVersions(KIND))('Gemini CLI %s recordings', (version) => {
  const run = (scenario: string) =>
    replay(fixtureLines(KIND, version, scenario), createGeminiParser, startsRun);
  const sessionId = (scenario: string) =>
    fixtureRecords(KIND, version, scenario, (r) => r.type === 'init')[0]!.session_id as string;
  const toolIds = (scenario: string) =>
    fixtureRecords(KIND, version, scenario, (r) => r.type === 'tool_use').map((r) => r.tool_id as string);

  it('has every scenario recorded', () => {
    expect(recordedScenarios(KIND, version).sort()).toEqual([
      'edit-and-commit',
      'error-api',
      'loop-detected',
      'plain-answer',
      'resume',
      'stream-retry',
      'write-todos',
      'write-todos-rejected',
    ]);
  });

  it('plain answer: session id, deltas joined into one text, usage, status success is a success', () => {
    expect(run('plain-answer')).toEqual([
      [
        { kind: 'conversation', id: sessionId('plain-answer') },
        say('Hello from the scripted model.'),
        // 1200 input tokens of which 1000 cached: 200 fresh.
        usage(200, 14, 1000),
        success('Hello from the scripted model.', 1),
      ],
    ]);
  });

  it('writes a file and commits, each tool call paired with its result', () => {
    const [write, shell] = toolIds('edit-and-commit');
    expect(run('edit-and-commit')).toEqual([
      [
        { kind: 'conversation', id: sessionId('edit-and-commit') },
        say('I will write the notes file.'),
        {
          kind: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: write,
              name: 'write_file',
              input: { file_path: 'NOTES.md', content: 'First line\n' },
            },
          ],
        },
        {
          kind: 'assistant',
          content: [{ type: 'tool_result', tool_use_id: write, content: '', is_error: false }],
        },
        {
          kind: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: shell,
              name: 'run_shell_command',
              input: {
                command: 'git add NOTES.md && git commit -q -m "Add notes"',
                description: 'Commit the notes',
              },
            },
          ],
        },
        {
          kind: 'assistant',
          content: [{ type: 'tool_result', tool_use_id: shell, content: '', is_error: false }],
        },
        say('Committed NOTES.md.'),
        // 1500 + 1600 + 1700 in (0 + 1500 + 1600 cached), 30 + 20 + 8 out.
        usage(1700, 58, 3100),
        success('Committed NOTES.md.', 3),
      ],
    ]);
  });

  it('write_todos becomes tasks; cancelled is closed with its state named; the end closes the one under way', () => {
    const [events] = run('write-todos');
    expect(events!.filter((e) => e.kind === 'tasks').map((e) => e.tasks)).toEqual([
      [
        { id: 'todo-1', title: 'Write the notes', status: 'in_progress' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
        { id: 'todo-3', title: 'Ask for review', status: 'pending' },
      ],
      [
        { id: 'todo-1', title: 'Write the notes', status: 'completed' },
        { id: 'todo-2', title: 'Run the tests', status: 'in_progress' },
        { id: 'todo-3', title: 'Ask for review (cancelled)', status: 'completed' },
      ],
      [
        { id: 'todo-1', title: 'Write the notes', status: 'completed' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
        { id: 'todo-3', title: 'Ask for review (cancelled)', status: 'completed' },
      ],
    ]);
    expect(events!.at(-2)).toEqual(success('Notes written; tests are running.', 3));
  });

  it('keeps the list of a write_todos the CLI accepted, not of one it refused', () => {
    const [events] = run('write-todos-rejected');
    const refused = fixtureRecords(KIND, version, 'write-todos-rejected', (r) => r.status === 'error');
    expect(refused).toHaveLength(1);
    expect(events!.filter((e) => e.kind === 'tasks').map((e) => e.tasks)).toEqual([
      [
        { id: 'todo-1', title: 'Write the notes', status: 'in_progress' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
      ],
      // The run is over: the task left under way is no longer in progress.
      [
        { id: 'todo-1', title: 'Write the notes', status: 'pending' },
        { id: 'todo-2', title: 'Run the tests', status: 'pending' },
      ],
    ]);
  });

  it('turns the retries it tells of on stderr into notices, and nothing else there', () => {
    const stderr = fixtureFile(KIND, version, 'stream-retry.stderr').split('\n');
    expect(stderr.length).toBeGreaterThan(10);
    expect(stderr.flatMap(geminiStderrEvents)).toEqual(
      [1, 2].map((attempt) => ({
        kind: 'notice',
        level: 'error',
        text: `Attempt ${attempt} failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request`,
      })),
    );
    // The answer that came after the retries is whole.
    expect(run('stream-retry')[0]).toContainEqual(say('Hello after the retries.'));
  });

  it('shows the loop-detection warning live and ends with it as the result text', () => {
    const ids = toolIds('loop-detected');
    expect(ids).toHaveLength(4);
    expect(run('loop-detected')).toEqual([
      [
        { kind: 'conversation', id: sessionId('loop-detected') },
        ...ids.flatMap((id): AgentEvent[] => [
          {
            kind: 'assistant',
            content: [
              {
                type: 'tool_use',
                id,
                name: 'run_shell_command',
                input: { command: 'ls', description: 'List files' },
              },
            ],
          },
          {
            kind: 'assistant',
            content: [{ type: 'tool_result', tool_use_id: id, content: 'README.md', is_error: false }],
          },
        ]),
        { kind: 'notice', level: 'info', text: 'Warning: Loop detected, stopping execution' },
        usage(1600, 40),
        success('Loop detected, stopping execution', 4),
      ],
    ]);
  });

  it('an API error ends with an error result that keeps the error type', () => {
    const [line] = fixtureRecords(KIND, version, 'error-api', (r) => r.type === 'result');
    const error = line!.error as { type: string; message: string };
    expect(error.message).toContain('the scripted request is invalid');
    expect(run('error-api')).toEqual([
      [
        { kind: 'conversation', id: sessionId('error-api') },
        usage(0, 0),
        {
          kind: 'result',
          result: {
            type: 'result',
            subtype: 'error',
            is_error: true,
            result: error.message,
            duration_ms: 0,
            num_turns: 0,
          },
          errorSubtype: error.type,
        },
      ],
    ]);
  });

  it('a resumed run carries the same session id and reports its own usage', () => {
    const id = sessionId('resume');
    expect(run('resume')).toEqual([
      [
        { kind: 'conversation', id },
        say('Remembered: the colour is teal.'),
        usage(800, 9),
        success('Remembered: the colour is teal.', 1),
      ],
      [
        { kind: 'conversation', id },
        say('You told me the colour is teal.'),
        usage(50, 10, 800),
        success('You told me the colour is teal.', 1),
      ],
    ]);
  });
});

describe('Gemini CLI parser', () => {
  it('shows error lines live: errors as errors, warnings as information', () => {
    const parser = createGeminiParser();
    expect(parser.line('{"type":"message","role":"assistant","content":"Half","delta":true}')).toEqual([]);
    expect(parser.line('{"type":"error","severity":"error","message":"Loop detected"}')).toEqual([
      say('Half'),
      { kind: 'notice', level: 'error', text: 'Loop detected' },
    ]);
    expect(parser.line('{"type":"error","severity":"warning","message":"Slow response"}')).toEqual([
      { kind: 'notice', level: 'info', text: 'Warning: Slow response' },
    ]);
  });

  it('a failed tool call carries its error; an open one is closed at the end, with blocked tasks kept open', () => {
    const parser = createGeminiParser();
    parser.line(
      '{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"x"}}',
    );
    expect(
      parser.line(
        '{"type":"tool_result","tool_id":"t1","status":"error","error":{"type":"X","message":"no such command"}}',
      ),
    ).toEqual([
      {
        kind: 'assistant',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'no such command', is_error: true }],
      },
    ]);
    const todos = { todos: [{ description: 'Wait for CI', status: 'blocked' }] };
    parser.line(
      JSON.stringify({ type: 'tool_use', tool_name: 'write_todos', tool_id: 't2', parameters: todos }),
    );
    expect(parser.line('{"type":"tool_result","tool_id":"t2","status":"success"}')).toContainEqual({
      kind: 'tasks',
      tasks: [{ id: 'todo-1', title: 'Wait for CI (blocked)', status: 'pending' }],
    });
    parser.line('{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t3","parameters":{}}');
    expect(parser.end()).toEqual([
      {
        kind: 'assistant',
        content: [
          { type: 'tool_result', tool_use_id: 't3', content: UNFINISHED_TOOL_RESULT, is_error: true },
        ],
      },
    ]);
  });
});
