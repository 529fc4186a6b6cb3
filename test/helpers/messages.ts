import type { Message } from '../../src-shared/sessions.js';

/** An assistant message holding one text block. */
export const assistantText = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});
