import { z } from 'zod';
import { PrStatusSchema, SessionSummarySchema } from './sessions.js';

/** Limits on what is sent to GitHub: its title limit, and a body that fits in one argument of gh. */
export const PR_TITLE_MAX_CHARS = 256;
export const PR_BODY_MAX_CHARS = 30_000;

export const OpenPullRequestBodySchema = z.strictObject({
  title: z
    .string()
    .max(PR_TITLE_MAX_CHARS)
    .refine((s) => s.trim() !== '', 'must not be blank')
    .optional()
    .describe("Default: the session's title."),
  body: z
    .string()
    .max(PR_BODY_MAX_CHARS)
    .optional()
    .describe("Default: the session's first prompt and its tasks."),
  draft: z.boolean().optional().describe('Open it as a draft (default false).'),
});
export type OpenPullRequestBody = z.infer<typeof OpenPullRequestBodySchema>;

export const PullRequestSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  status: PrStatusSchema,
  mergedAt: z.iso
    .datetime({ precision: 3 })
    .optional()
    .describe('When it was merged (what `mergesPastWeek` counts); only while `status` is `merged`.'),
});
export type PullRequest = z.infer<typeof PullRequestSchema>;

export const PullRequestResponseSchema = z.object({
  pullRequest: PullRequestSchema,
  session: SessionSummarySchema,
});
export type PullRequestResponse = z.infer<typeof PullRequestResponseSchema>;

export const GhStatusResponseSchema = z.object({
  available: z
    .boolean()
    .describe('Whether the server finds the GitHub CLI (`gh`), which opens and reads pull requests.'),
  problem: z.string().optional().describe('When it is not found: what is missing and how to fix it.'),
});
export type GhStatusResponse = z.infer<typeof GhStatusResponseSchema>;
