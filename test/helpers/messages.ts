import type { Message } from '../../src-shared/sessions.js';

/** An assistant message holding one text block. */
export const assistantText = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

/** A run's successful result, saying `result`. */
export const runResult = (result: string): Message => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result,
  duration_ms: 10,
  num_turns: 3,
});
