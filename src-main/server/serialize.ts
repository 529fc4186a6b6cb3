import type { Task } from '../../src-shared/sessions.js';
import { sessionFields } from '../sessions/summary.js';
import type { SessionRow } from '../store/session-row.js';

/**
 * `{"session": <full form>}` as the JSON text around its messages: `head`, then the
 * messages separated by commas, then `tail`. Messages were validated when they were stored
 * and are kept as JSON, so they are copied from their transcript rather than parsed and
 * re-serialized: that is most of the cost of this, the busiest read.
 */
export function fullSessionFrame(row: SessionRow, tasks: Task[]): { head: string; tail: string } {
  const head = JSON.stringify(sessionFields(row));
  return {
    head: `{"session":${head.slice(0, -1)},"messages":[`,
    tail: `],"tasks":${JSON.stringify(tasks)}}}`,
  };
}
