import type { AssistantMessage } from '../../src-shared/sessions.js';
import { MessageTooLargeError } from '../store/errors.js';
import type { SessionSink } from './types.js';

/** Text the agent CLI reported rather than the model said, shown apart in the transcript. */
export function notice(text: string, level: 'error' | 'info'): AssistantMessage {
  return { type: 'assistant', message: { content: [{ type: 'text', text }] }, notice: level };
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What replaces a line of output longer than the lines read. */
export function oversizeLineText(bytes: number, lineMax: number): string {
  return `A line of output of ${mib(bytes)} was skipped: lines are read up to ${mib(lineMax)}.`;
}

/** Appends an agent's message; one over the store's limit is replaced by a notice, and the run goes on. */
export async function appendWithinCap(sink: SessionSink, message: AssistantMessage): Promise<void> {
  try {
    await sink.assistant(message);
  } catch (err) {
    if (!(err instanceof MessageTooLargeError)) throw err;
    await sink.assistant(
      notice(`A message of ${mib(err.bytes)} was left out: a session keeps messages up to 16 MiB.`, 'error'),
    );
  }
}

/**
 * The most output an agent's terminal keeps (its own `outputByteLimit` may be lower): what the
 * agent reads back, and what its tool call's result shows.
 */
export const TERMINAL_OUTPUT_MAX_BYTES = 1024 * 1024;
