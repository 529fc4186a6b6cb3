import { z } from 'zod';
import { NO_CONTROL_MESSAGE, noControl } from '../../src-shared/accounts.js';
import { idPattern } from '../../src-shared/ids.js';
import { SessionStatusSchema } from '../../src-shared/sessions.js';
import { MAX_MESSAGE_BYTES } from '../store/transcript-format.js';
import { MessageLineSchema, SessionHeadSchema } from './format.js';

/**
 * What a desktop sends a team server (`sessiondesk push`): a session as the export's records
 * (its `session` line and its `message` lines), a part at a time, each part saying how many
 * messages the server must already hold, so that a part is applied once whatever the client
 * retries after a crash.
 */
export const PUSH_SESSIONS_PATH = '/api/push/sessions';

/** Messages a client puts in one part; a single larger message goes alone. */
export const PUSH_PART_BYTES = 2 ** 20;
export const PUSH_PART_MESSAGES = 1000;
/** A part's body: one message of the largest size a session stores, and room around it. */
export const PUSH_BODY_LIMIT = MAX_MESSAGE_BYTES + 2 ** 20;

export const MachineSchema = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(255)
  .refine(noControl, NO_CONTROL_MESSAGE)
  .describe('The host name of the desktop pushing.');

export const PushPartSchema = z
  .strictObject({
    machine: MachineSchema,
    session: SessionHeadSchema.describe(
      "The session's `session` record of the export format (`sessiondesk export`), with its `messageCount` on the desktop.",
    ),
    from: z
      .number()
      .int()
      .min(0)
      .describe('How many messages the server holds before this part (what `GET …/{sessionId}` answered).'),
    messages: z
      .array(MessageLineSchema)
      .max(PUSH_PART_MESSAGES)
      .describe('The `message` records that follow, in order.'),
  })
  .superRefine((part, ctx) => {
    if (part.from + part.messages.length > part.session.messageCount) {
      ctx.addIssue({
        code: 'custom',
        path: ['messages'],
        message: `from (${part.from}) and ${part.messages.length} messages go past the session's messageCount (${part.session.messageCount})`,
      });
    }
  });
export type PushPart = z.infer<typeof PushPartSchema>;

export const PushParamsSchema = z.object({
  sessionId: z.string().regex(idPattern('session'), 'must be a session id (ses_…)'),
});

/** How far the server holds a pushed session. */
export const PushedStateSchema = z.object({
  messageCount: z.number().int(),
  updatedAt: z.string(),
  /** Absent from a server older than it: a status changed without a message is then not seen. */
  status: SessionStatusSchema.optional(),
});
export type PushedState = z.infer<typeof PushedStateSchema>;

/** What a part did: how far the server now holds the session, and whose it is there. */
export const PushAnswerSchema = PushedStateSchema.extend({
  author: z
    .object({ name: z.string(), email: z.string() })
    .describe(
      "The account on this server the session is attributed to: the member who made the key, or with a key made on the command line the member the desktop's author email names, else the workspace's owner.",
    ),
  authorNote: z
    .string()
    .optional()
    .describe('Present when that account is not the author the desktop named: says whose it is, and why.'),
});
export type PushAnswer = z.infer<typeof PushAnswerSchema>;
