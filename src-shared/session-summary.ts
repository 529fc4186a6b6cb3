import { z } from 'zod';
import { SessionSummarySchema, TaskSchema } from './sessions.js';

/**
 * A session without its messages: the summary form (both previews, as in the list) and its
 * tasks. What a page about one session shows above and beside its transcript, which it
 * reads in pages.
 */
export const SessionWithTasksSchema = SessionSummarySchema.extend({
  tasks: z.array(TaskSchema),
});
export type SessionWithTasks = z.infer<typeof SessionWithTasksSchema>;

export const SessionSummaryResponseSchema = z.object({ session: SessionWithTasksSchema });
