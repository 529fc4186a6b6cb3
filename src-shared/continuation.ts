import { z } from 'zod';
import { HISTORY_KINDS } from './sessions.js';

/** One way an imported session could go on. */
const ContinueChoiceSchema = z.object({
  possible: z.boolean().describe('Whether a follow-up sent this way would start here and now.'),
  why: z
    .string()
    .optional()
    .describe('Why this way cannot work, and what would make it work where something would.'),
});

/** `GET /api/sessions/{id}/continuation`: where a follow-up to an imported session can go on. */
export const ContinuationChoicesResponseSchema = z.object({
  cli: z.enum(HISTORY_KINDS).describe("The CLI whose own resume continues the conversation, the session's."),
  blocked: z
    .string()
    .optional()
    .describe(
      'What keeps it from going on either way: its CLI not installed on this machine (and how to install it), or no conversation to resume. Neither choice is then possible.',
    ),
  original: ContinueChoiceSchema.extend({
    folder: z.string().optional().describe('The folder the CLI ran in, as it recorded it.'),
  }).describe(
    '`continueIn: "original"`: in that folder, the person\'s own work tree; the administrator only.',
  ),
  sandbox: ContinueChoiceSchema.extend({
    repository: z.string().optional().describe('`<owner>/<repo>` a fresh clone is made of.'),
  }).describe('`continueIn: "sandbox"`: in a fresh clone of its repository, in the session\'s sandbox.'),
});
export type ContinuationChoices = z.infer<typeof ContinuationChoicesResponseSchema>;
