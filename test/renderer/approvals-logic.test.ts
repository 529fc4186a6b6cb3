import { describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/sessions';
import { choicesOf } from '../../src-renderer/src/features/approvals/choices';
import { timeLeft } from '../../src-renderer/src/features/approvals/time-left';
import { buildTranscript, itemText } from '../../src-renderer/src/features/transcript/transcript';

const OPTIONS = [
  { id: 'allow', kind: 'allow_once' as const, label: 'Allow once' },
  { id: 'allow_session', kind: 'allow_always' as const, label: 'Allow for this session' },
  { id: 'reject', kind: 'reject_once' as const, label: 'Reject' },
];

const request = {
  id: 'apr_1',
  title: 'echo hi > a.txt',
  tool: { kind: 'execute', name: 'Bash', input: { command: 'echo hi > a.txt' } },
  detail: '$ echo hi > a.txt',
  options: OPTIONS,
  expiresAt: '2026-01-01T00:30:00.000Z',
};
const asked: Message = {
  type: 'assistant',
  notice: 'info',
  message: { content: [{ type: 'text', text: 'The agent asks before it acts: echo hi > a.txt' }] },
  approval: request,
};
const decided: Message = {
  type: 'assistant',
  notice: 'info',
  message: { content: [{ type: 'text', text: 'Reject: decided by Ada.\n\nMessage to the agent: No.' }] },
  approvalDecided: {
    id: 'apr_1',
    decision: 'reject_once',
    decidedAt: '2026-01-01T00:01:00.000Z',
    decidedBy: { kind: 'user', userId: 'usr_1', name: 'Ada' },
    optionId: 'reject',
    message: 'No.',
  },
};

describe('requests in the transcript', () => {
  it('shows a request in place, decided once the transcript says so', () => {
    const waiting = buildTranscript([{ type: 'user', message: { content: 'Go' } }, asked]);
    expect(waiting[1]).toMatchObject({ kind: 'approval', key: '1', request, decided: null });
    const items = buildTranscript([{ type: 'user', message: { content: 'Go' } }, asked, decided]);
    expect(items.map((item) => item.kind)).toEqual(['user', 'approval', 'approval-decided']);
    expect(items[1]).toMatchObject({ decided: { decision: 'reject_once', message: 'No.' } });
    expect(itemText(items[2]!)).toContain('Message to the agent: No.');
    // Rebuilt as messages arrive, the row keeps the same parts (it need not render again).
    const again = buildTranscript([{ type: 'user', message: { content: 'Go' } }, asked, decided]);
    expect((again[1] as { request: unknown }).request).toBe((items[1] as { request: unknown }).request);
  });

  it('shows a malformed request as the words it carries', () => {
    const odd = { ...asked, approval: { id: 3 } } as Message;
    expect(buildTranscript([odd])).toEqual([
      { kind: 'text', key: '0.0', text: 'The agent asks before it acts: echo hi > a.txt' },
    ]);
  });
});

describe('choices and the time left', () => {
  it('finds the choice each key makes; reject falls back on an always-reject option', () => {
    expect(choicesOf(OPTIONS)).toEqual({
      allowOnce: OPTIONS[0],
      allowSession: OPTIONS[1],
      reject: OPTIONS[2],
    });
    const acp = [
      { id: 'yes', kind: 'allow_once' as const, label: 'Yes' },
      { id: 'never', kind: 'reject_always' as const, label: 'No, never' },
    ];
    expect(choicesOf(acp)).toEqual({ allowOnce: acp[0], allowSession: undefined, reject: acp[1] });
    expect(choicesOf([]).reject).toBeUndefined();
  });

  it('counts down in seconds, minutes and hours', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    expect(timeLeft('2026-01-01T00:00:40.000Z', now)).toBe('40 s left');
    expect(timeLeft('2026-01-01T00:29:59.000Z', now)).toBe('29 min left');
    expect(timeLeft('2026-01-01T02:00:00.000Z', now)).toBe('2 h left');
    expect(timeLeft('2026-01-01T01:05:30.000Z', now)).toBe('1 h 5 min left');
    expect(timeLeft('2025-12-31T23:59:00.000Z', now)).toBe('expiring now');
  });
});
