import type { Task } from '../../src-shared/sessions.js';
import { sessionFields } from '../sessions/summary.js';
import type { SessionRow } from '../store/sessions.js';

/**
 * `{"session": <full form>}` as JSON text. Message bodies were validated when they were
 * stored and are kept as JSON text, so they are spliced in rather than parsed and
 * re-serialized: that is most of the cost of this, the busiest read.
 */
export function fullSessionJson(row: SessionRow, messageBodies: string[], tasks: Task[]): string {
  const head = JSON.stringify(sessionFields(row));
  return `{"session":${head.slice(0, -1)},"messages":[${messageBodies.join(',')}],"tasks":${JSON.stringify(tasks)}}}`;
}
