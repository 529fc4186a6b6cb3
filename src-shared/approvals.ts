import { z } from 'zod';
import { ApprovalRuleShapeSchema } from './approval-rules.js';

/**
 * What agents ask before they act, in a workspace whose `approvals` setting is `ask`: a
 * pending request, its choices, and once answered who answered what and when.
 */

/** The kinds of choice the Agent Client Protocol names; every agent's options map onto them. */
export const APPROVAL_KINDS = ['allow_once', 'allow_always', 'reject_once', 'reject_always'] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

const KIND_WORDS: Record<ApprovalKind, string> = {
  allow_once: 'Allow once',
  allow_always: 'Allow for this session',
  reject_once: 'Reject',
  reject_always: 'Always reject',
};

/**
 * Session Desk's own words for a kind of choice: what the choice does, whatever the agent
 * called it (the agent's `label` is its own words, and may say otherwise).
 */
export function approvalKindWords(kind: ApprovalKind): string {
  return KIND_WORDS[kind];
}
/**
 * How a request ended: one of the kinds, `cancelled` (its run was stopped, interrupted by a
 * follow-up, or the server stopped) or `expired` (its run died with the server, found at restart).
 */
export const APPROVAL_DECISIONS = [...APPROVAL_KINDS, 'cancelled', 'expired'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** A workspace's way with agents' requests: `auto` allows every tool call inside the sandbox. */
export const APPROVAL_MODES = ['auto', 'ask'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 30 * 60;
export const MAX_APPROVAL_TIMEOUT_SECONDS = 24 * 60 * 60;
/** Longest rejection message passed on to an agent. */
export const APPROVAL_MESSAGE_MAX_CHARS = 4000;

export const ApprovalOptionSchema = z.object({
  id: z.string().describe('Send it as `optionId` to choose this option.'),
  kind: z
    .enum(APPROVAL_KINDS)
    .describe(
      'What choosing it does, whatever its label says: `allow_once`, `allow_always` (for the rest of the session), `reject_once` or `reject_always`. Show this, not the label alone: an agent may label an allow "Reject".',
    ),
  label: z
    .string()
    .describe(
      "The agent's own words for it (at most 100 characters, without control characters), or Session Desk's where the agent has none.",
    ),
});
export type ApprovalOption = z.infer<typeof ApprovalOptionSchema>;

export const ApprovalToolSchema = z.object({
  kind: z
    .string()
    .describe(
      "What the tool does: `execute`, `edit`, `read`, `delete`, `move`, `search`, `fetch`, `think` or `other` (the Agent Client Protocol's kinds).",
    ),
  name: z.string().describe("The tool's name as the agent calls it (`Bash`, `run_shell_command`, …)."),
  input: z.unknown().describe('What the agent would call it with, in full.'),
  command: z
    .string()
    .optional()
    .describe(
      'For `execute`: the command line, as approval rules match it (whitespace runs made one space). Absent when the agent gave none Session Desk can read, or one longer than 10,000 characters.',
    ),
  paths: z
    .array(z.string())
    .optional()
    .describe(
      "For the file kinds: the paths the call touches, as approval rules match them: relative to the session's folder inside it (`.` for the folder itself), absolute outside it. Absent when the agent named none.",
    ),
  url: z.string().optional().describe('For `fetch`: the URL, as approval rules match it.'),
});
export type ApprovalTool = z.infer<typeof ApprovalToolSchema>;

export const ApprovalDecidedBySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user'), userId: z.string(), name: z.string() }),
  z.object({ kind: z.literal('apiKey'), keyId: z.string(), label: z.string() }),
  z.object({
    kind: z.literal('sessiondesk'),
    reason: z
      .enum([
        'timeout',
        'stopped',
        'follow-up',
        'server-stopped',
        'server-restarted',
        'run-ended',
        'imported',
      ])
      .describe(
        'Why Session Desk answered it itself; `imported`: it was still pending in the export it was imported from.',
      ),
  }),
  z.object({
    kind: z.literal('rule'),
    index: z
      .number()
      .int()
      .min(0)
      .describe("The rule's place in the workspace's `approvalRules` when it decided, from 0."),
    rule: ApprovalRuleShapeSchema.describe('The rule as it was then (the list may have changed since).'),
  }),
]);
export type ApprovalDecidedBy = z.infer<typeof ApprovalDecidedBySchema>;

export const ApprovalSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  agent: z.string().describe('The agent that asks: its kind, or with `acp` the ACP agent (`acp:gemini`).'),
  createdAt: z.string(),
  expiresAt: z.string().describe('When it is rejected unless someone decides first.'),
  title: z
    .string()
    .describe(
      'What the agent wants to do, in a line of at most 200 characters, without control or bidirectional characters.',
    ),
  tool: ApprovalToolSchema,
  detail: z
    .string()
    .optional()
    .describe(
      "What a person reads before deciding, as the transcript shows it: the command, or each edit's whole diff. Absent when the agent sent nothing to show beyond `tool`.",
    ),
  options: z.array(ApprovalOptionSchema),
  decidedAt: z.string().optional(),
  decision: z.enum(APPROVAL_DECISIONS).optional(),
  optionId: z.string().optional().describe('The option the decision chose, when one was.'),
  message: z.string().optional().describe('What the person told the agent with a rejection.'),
  decidedBy: ApprovalDecidedBySchema.optional(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

export const ApprovalsQuerySchema = z.object({
  organizationId: z
    .string()
    .max(100)
    .optional()
    .describe("The workspace whose pending requests to list (an API key's own without it)."),
  sessionId: z.string().max(100).optional().describe("Only this session's."),
});
export const ApprovalParamsSchema = z.object({ approvalId: z.string().max(100) });
export const ApprovalsResponseSchema = z.object({
  approvals: z.array(ApprovalSchema).describe('Pending requests, oldest first.'),
});
export const ApprovalResponseSchema = z.object({ approval: ApprovalSchema });

export const DecideApprovalBodySchema = z
  .strictObject({
    optionId: z.string().min(1).max(200).optional().describe("One of the request's `options`, by id."),
    decision: z
      .enum(APPROVAL_KINDS)
      .optional()
      .describe("Instead of `optionId`: the first of the agent's options of this kind."),
    message: z
      .string()
      .trim()
      .min(1, 'must not be blank')
      .max(APPROVAL_MESSAGE_MAX_CHARS)
      .optional()
      .describe('With a rejection: what to tell the agent (why, or what to do instead).'),
  })
  .superRefine((body, check) => {
    if ((body.optionId === undefined) === (body.decision === undefined)) {
      check.addIssue({
        code: 'custom',
        path: body.optionId === undefined ? ['decision'] : ['optionId'],
        message: 'send either optionId or decision, not both and not neither',
      });
    }
  });
export type DecideApprovalBody = z.infer<typeof DecideApprovalBodySchema>;

/** A request as the transcript carries it, on the message where the agent asked (`approval`). */
export const TranscriptApprovalSchema = ApprovalSchema.pick({
  id: true,
  title: true,
  tool: true,
  detail: true,
  options: true,
  expiresAt: true,
});
export type TranscriptApproval = z.infer<typeof TranscriptApprovalSchema>;

/** What became of a request, on the transcript's message that says so (`approvalDecided`). */
export const TranscriptApprovalDecidedSchema = z.object({
  id: z.string(),
  decision: z.enum(APPROVAL_DECISIONS),
  decidedAt: z.string(),
  decidedBy: ApprovalDecidedBySchema,
  optionId: z.string().optional(),
  message: z.string().optional(),
});
export type TranscriptApprovalDecided = z.infer<typeof TranscriptApprovalDecidedSchema>;
