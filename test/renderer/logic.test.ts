import { describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/sessions';
import {
  buildTranscript,
  toolResultText,
  toolSummary,
} from '../../src-renderer/src/features/transcript/transcript';
import { fold, initials, relativeTime } from '../../src-renderer/src/lib/format';

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
    expect(items.at(-1)).toMatchObject({ kind: 'result', success: true, text: 'Fixed.', turns: 3 });
  });

  it('shows a tool use still waiting for its result', () => {
    const items = buildTranscript(messages.slice(0, 2));
    expect(items.filter((i) => i.kind === 'tool').every((i) => i.kind === 'tool' && i.result === null)).toBe(
      true,
    );
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
    expect(item).toMatchObject({ kind: 'result', success: false });
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
