import { describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/sessions';
import {
  buildTranscript,
  itemText,
  toolResultText,
  toolSummary,
} from '../../src-renderer/src/features/transcript/transcript';
import { readListView, writeListView } from '../../src-renderer/src/features/sessions/list-params';
import { fold, initials, relativeTime } from '../../src-renderer/src/lib/format';
import { inlineCodeParts } from '../../src-renderer/src/lib/inline-code';
import { displayTitle, plainText } from '../../src-renderer/src/lib/plain-text';
import { pageTitle } from '../../src-renderer/src/lib/use-page-title';
import { doneSummary } from '../../src-renderer/src/lib/tasks';

describe('buildTranscript', () => {
  const messages: Message[] = [
    { type: 'user', message: { content: 'Fix the test' } },
    {
      type: 'assistant',
      message: {
        content: [
          { type: 'thinking', thinking: 'Look at the test first.' },
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'a', name: 'Read', input: { file_path: 'test/login.test.ts' } },
          { type: 'tool_use', id: 'b', name: 'Bash', input: { command: 'npm test\n--verbose' } },
        ],
      },
    },
    {
      type: 'assistant',
      message: {
        content: [
          { type: 'tool_result', tool_use_id: 'b', content: 'FAIL', is_error: true },
          { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'line 1' }] },
          { type: 'tool_result', tool_use_id: 'zzz', content: 'nobody asked' },
        ],
      },
    },
    {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Fixed.',
      duration_ms: 1200,
      num_turns: 3,
    },
  ];

  it('keeps conversation order and pairs each tool use with its later result', () => {
    const items = buildTranscript(messages);
    expect(items.map((i) => i.kind)).toEqual([
      'user',
      'thinking',
      'text',
      'tool',
      'tool',
      'orphan-result',
      'result',
    ]);
    const [read, bash] = items.filter((i) => i.kind === 'tool');
    expect(read?.kind === 'tool' && read.result?.tool_use_id).toBe('a');
    expect(bash?.kind === 'tool' && bash.result?.is_error).toBe(true);
    expect(items.at(-1)).toMatchObject({ kind: 'result', outcome: 'success', text: 'Fixed.', turns: 3 });
  });

  it('shows a tool use still waiting for its result', () => {
    const items = buildTranscript(messages.slice(0, 2));
    expect(items.filter((i) => i.kind === 'tool').every((i) => i.kind === 'tool' && i.result === null)).toBe(
      true,
    );
  });

  it('keys items by their place in the whole conversation when only a later part is read', () => {
    const whole = buildTranscript(messages);
    const later = buildTranscript(messages.slice(1), true, 1);
    expect(later.map((i) => i.key)).toEqual(['1.0', '1.1', '1.2', '1.3', '3']);
    expect(whole.map((i) => i.key)).toEqual(expect.arrayContaining(later.map((i) => i.key)));
  });

  it('holds back a result whose call is in messages not read yet, and pairs them once read', () => {
    // Read from message 2: the results of calls a and b arrive before their calls are read.
    const later = buildTranscript(messages.slice(2), true, 2);
    expect(later.map((i) => i.kind)).toEqual(['result']);
    // The unrelated result is only an orphan once nothing before it is unread.
    const whole = buildTranscript(messages, true, 0);
    expect(whole.filter((i) => i.kind === 'orphan-result')).toHaveLength(1);
    expect(whole.filter((i) => i.kind === 'tool' && i.result !== null)).toHaveLength(2);
  });

  it('gives each item the words it shows, folded parts included, for find in transcript', () => {
    const texts = buildTranscript(messages).map(itemText);
    expect(texts[0]).toBe('Fix the test');
    expect(texts[3]).toContain('Read');
    expect(texts[3]).toContain('test/login.test.ts');
    expect(texts[3]).toContain('line 1');
    expect(texts.at(-1)).toBe('Fixed.');
  });

  it('marks an error result as not successful', () => {
    const [item] = buildTranscript([
      {
        type: 'result',
        subtype: 'error',
        is_error: true,
        result: 'Clone failed',
        duration_ms: 1,
        num_turns: 0,
      },
    ]);
    expect(item).toMatchObject({ kind: 'result', outcome: 'error' });
  });

  it('marks a stopped run as stopped, neither finished nor failed', () => {
    const [item] = buildTranscript([
      {
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'Stopped by Ada.',
        duration_ms: 1,
        num_turns: 0,
        stopped: true,
      },
    ]);
    expect(item).toMatchObject({ kind: 'result', outcome: 'stopped' });
  });

  it('shows a tool call without a result as ended once its run is over', () => {
    const open = messages.slice(0, 2);
    const states = (items: ReturnType<typeof buildTranscript>) =>
      items.flatMap((i) => (i.kind === 'tool' ? [i.state] : []));
    expect(states(buildTranscript(open, true))).toEqual(['running', 'running']);
    expect(states(buildTranscript(open, false))).toEqual(['ended', 'ended']);
    const stopped: Message = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Stopped.',
      duration_ms: 1,
      num_turns: 0,
    };
    // A later result ends the run, even while the session is active again (a follow-up).
    expect(states(buildTranscript([...open, stopped], true))).toEqual(['ended', 'ended']);
    expect(states(buildTranscript(messages, true))).toEqual(['done', 'error']);
  });

  it('shows todo-list calls as one folded task update per run of updates', () => {
    const todo = (id: string, statuses: string[]): Message => ({
      type: 'assistant',
      message: {
        content: [
          {
            type: 'tool_use',
            id,
            name: 'TodoWrite',
            input: { todos: statuses.map((status, i) => ({ content: `Task ${i + 1}`, status })) },
          },
        ],
      },
    });
    const result = (id: string): Message => ({
      type: 'assistant',
      message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'Todos updated' }] },
    });
    const items = buildTranscript([
      todo('t1', ['pending', 'pending']),
      result('t1'),
      todo('t2', ['in_progress', 'pending']),
      result('t2'),
      messages[1]!,
      todo('t3', ['completed', 'in_progress']),
    ]);
    expect(items.map((i) => i.kind)).toEqual(['todo', 'thinking', 'text', 'tool', 'tool', 'todo']);
    expect(items[0]).toMatchObject({
      kind: 'todo',
      todos: [
        { title: 'Task 1', status: 'in_progress' },
        { title: 'Task 2', status: 'pending' },
      ],
    });
  });

  it('summarizes tool input and result content', () => {
    expect(
      toolSummary({ type: 'tool_use', id: 'x', name: 'Bash', input: { command: 'npm test\n--verbose' } }),
    ).toBe('npm test');
    expect(toolSummary({ type: 'tool_use', id: 'x', name: 'Think', input: {} })).toBe('');
    expect(
      toolResultText({
        type: 'tool_result',
        tool_use_id: 'a',
        content: [{ type: 'text', text: 'x' }, { type: 'image' }],
      }),
    ).toBe('x\n{"type":"image"}');
  });
});

describe('task updates', () => {
  const todo = (id: string, statuses: string[]): Message => ({
    type: 'assistant',
    message: {
      content: [
        {
          type: 'tool_use',
          id,
          name: 'TodoWrite',
          input: { todos: statuses.map((status, i) => ({ content: `Task ${i + 1}`, status })) },
        },
      ],
    },
  });
  const read = (id: string): Message => ({
    type: 'assistant',
    message: { content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: 'a.ts' } }] },
  });
  const result: Message = {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: 'Done.',
    duration_ms: 1,
    num_turns: 1,
  };
  const summaries = (messages: Message[], active: boolean) =>
    buildTranscript(messages, active).flatMap((item) =>
      item.kind === 'todo'
        ? [
            doneSummary(
              item.todos.map((t) => t.status),
              item.runOver,
            ),
          ]
        : [],
    );

  it('a list the run updated again reads as it stood, before and after the run: never "not done"', () => {
    const run = [
      { type: 'user', message: { content: 'Go' } } as Message,
      todo('t1', ['in_progress', 'pending']),
      read('r1'),
      todo('t2', ['completed', 'in_progress']),
      read('r2'),
      todo('t3', ['completed', 'completed']),
    ];
    expect(summaries(run, true)).toEqual([
      '0 of 2 done · 1 in progress',
      '1 of 2 done · 1 in progress',
      '2 of 2 done',
    ]);
    expect(summaries([...run, result], false)).toEqual([
      '0 of 2 done · 1 in progress',
      '1 of 2 done · 1 in progress',
      '2 of 2 done',
    ]);
  });

  it("a run's last list, once the run is over, says what it left not done; the next run's lists are its own", () => {
    const messages = [
      { type: 'user', message: { content: 'Go' } } as Message,
      todo('t1', ['completed', 'in_progress']),
      result,
      { type: 'user', message: { content: 'Go on' } } as Message,
      todo('t2', ['completed', 'in_progress']),
    ];
    expect(summaries(messages, true)).toEqual(['1 of 2 done · 1 not done', '1 of 2 done · 1 in progress']);
  });
});

describe('format', () => {
  const now = new Date('2026-05-10T12:00:00.000Z');
  it.each([
    ['2026-05-10T11:59:50.000Z', 'just now'],
    ['2026-05-10T11:55:00.000Z', '5 minutes ago'],
    ['2026-05-10T09:00:00.000Z', '3 hours ago'],
    ['2026-05-09T12:00:00.000Z', 'yesterday'],
    ['2026-04-19T12:00:00.000Z', '3 weeks ago'],
    ['2025-05-01T12:00:00.000Z', 'last year'],
  ])('relativeTime(%s) is "%s"', (iso, expected) => {
    expect(relativeTime(iso, now)).toBe(expected);
  });

  it('makes initials from one or more names, emoji-safe', () => {
    expect(initials('Ada Lovelace')).toBe('AL');
    expect(initials('ada')).toBe('A');
    expect(initials('  Grace  Brewster  Hopper ')).toBe('GH');
    expect(initials('')).toBe('');
  });

  it('folds long output by lines or characters', () => {
    expect(fold('short')).toEqual({ short: 'short', folded: false });
    const many = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
    const folded = fold(many);
    expect(folded.folded).toBe(true);
    expect(folded.short.split('\n')).toHaveLength(20);
    expect(fold('x'.repeat(5000)).short).toHaveLength(2000);
  });
});

describe('plainText and displayTitle', () => {
  it.each([
    [
      "I'll work on **Find why the export is slow** step by step.",
      "I'll work on Find why the export is slow step by step.",
    ],
    ['Run `npm test` and read [the guide](https://example.com).', 'Run npm test and read the guide.'],
    ['## Summary\n- one\n- two', 'Summary one two'],
    ['snake_case_name stays, 2 * 3 * 4 too', 'snake_case_name stays, 2 * 3 * 4 too'],
  ])('plainText(%j) is %j', (markdown, text) => {
    expect(plainText(markdown)).toBe(text);
  });

  it('adds an ellipsis only to a title cut from a longer sentence', () => {
    const prompt =
      'Investigate why the nightly export job takes four hours on the largest workspace and make it fast again';
    const cut = 'Investigate why the nightly export job takes four hours on the largest workspace';
    expect(displayTitle(cut, prompt)).toBe(`${cut}…`);
    expect(displayTitle('Fix the flaky login test', 'Fix the flaky login test. It fails.')).toBe(
      'Fix the flaky login test',
    );
    const whole = 'Investigate why the nightly export job takes four hours on the largest workspaces';
    expect(displayTitle(whole, `${whole}. Then make it fast.`)).toBe(whole);
    expect(
      displayTitle('Renamed by hand to something much longer than sixty characters in all', prompt),
    ).toBe('Renamed by hand to something much longer than sixty characters in all');
  });
});

describe('the list view in the address', () => {
  it('round-trips filters, search and cursor, and ignores what it does not know', () => {
    const view = readListView(
      new URLSearchParams('status=failed&author=usr_1&repository=acme%2Fweb&q=flaky&cursor=abc&x=1'),
    );
    expect(view).toEqual({
      filters: { status: 'failed', authorId: 'usr_1', repository: 'acme/web', q: 'flaky' },
      cursor: 'abc',
    });
    expect(writeListView(view).toString()).toBe(
      'status=failed&author=usr_1&repository=acme%2Fweb&q=flaky&cursor=abc',
    );
    expect(readListView(new URLSearchParams('status=bogus')).filters.status).toBeUndefined();
    // Searching in transcripts is part of the view too.
    const transcripts = readListView(new URLSearchParams('q=retry&in=transcripts'));
    expect(transcripts).toEqual({ filters: { q: 'retry' }, cursor: undefined, transcripts: true });
    expect(writeListView(transcripts).toString()).toBe('q=retry&in=transcripts');
  });
});

describe('inlineCodeParts', () => {
  it('shows commands in backticks as code, not as raw marks', () => {
    expect(inlineCodeParts('not signed in: run `gh auth login` as the user (or set GH_TOKEN).')).toEqual([
      { text: 'not signed in: run ', code: false },
      { text: 'gh auth login', code: true },
      { text: ' as the user (or set GH_TOKEN).', code: false },
    ]);
  });

  it('keeps lines, and a lone backtick as written', () => {
    expect(inlineCodeParts('`gh` failed.\n\nremote: it`s rejected')).toEqual([
      { text: 'gh', code: true },
      { text: ' failed.\n\nremote: it`s rejected', code: false },
    ]);
    expect(inlineCodeParts('')).toEqual([]);
  });
});

describe('pageTitle', () => {
  it('names the page first, then the app', () => {
    expect(pageTitle('Members')).toBe('Members · Session Desk');
    expect(pageTitle('  Fix the flaky login test ')).toBe('Fix the flaky login test · Session Desk');
  });

  it('is the app alone while the page has no name yet', () => {
    expect(pageTitle(undefined)).toBe('Session Desk');
    expect(pageTitle(' ')).toBe('Session Desk');
  });
});
