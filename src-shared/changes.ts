import { z } from 'zod';

/** What happened to a file between the base and the sandbox's working tree. */
export const CHANGE_STATUSES = ['added', 'modified', 'deleted', 'renamed'] as const;
/** What the path is in git: a regular file, a symbolic link (its target is its content), a submodule. */
export const CHANGED_FILE_KINDS = ['file', 'symlink', 'submodule'] as const;

/** Caps on what one answer carries; the counts stay exact whatever is cut. */
export const CHANGES_LIMITS = {
  /** Patch text kept per file. */
  filePatchBytes: 256 * 1024,
  /** Patch text kept in all; files past it are listed without a patch. */
  totalPatchBytes: 2 * 1024 * 1024,
  /** Files listed; past it only the totals count them. */
  files: 3000,
} as const;

export const ChangedFileSchema = z.object({
  path: z.string().describe('Relative to the repository root; the new path of a renamed file.'),
  oldPath: z.string().optional().describe('Renamed files only: the path on the base.'),
  status: z.enum(CHANGE_STATUSES),
  kind: z.enum(CHANGED_FILE_KINDS),
  binary: z.boolean().describe('Binary (or over 32 MiB): no line counts and no hunks.'),
  additions: z.number().int(),
  deletions: z.number().int(),
  patch: z
    .string()
    .optional()
    .describe("git's unified diff of this file; absent when the answer's patch cap was already spent."),
  truncated: z.boolean().describe('The patch is cut (at a line end) or absent because of a cap.'),
});
export type ChangedFile = z.infer<typeof ChangedFileSchema>;

export const ChangesTotalsSchema = z.object({
  files: z.number().int(),
  additions: z.number().int(),
  deletions: z.number().int(),
});

export const SessionChangesSchema = z.object({
  available: z.literal(true),
  base: z.object({
    branch: z.string().describe("The session's base branch."),
    ref: z.string().describe('The ref compared against, e.g. `refs/remotes/origin/main`.'),
    mergeBase: z.string().describe('The commit where the working branch left the base.'),
  }),
  head: z.object({
    branch: z.string().nullable().describe('The branch checked out in the sandbox; null when detached.'),
    commit: z.string(),
  }),
  files: z.array(ChangedFileSchema),
  totals: ChangesTotalsSchema.describe('Of every changed file, listed or not; exact even when truncated.'),
  truncated: z.boolean().describe('Some patch is cut or absent, or some file is not listed.'),
  computedAt: z.iso.datetime({ precision: 3 }),
});
export type SessionChanges = z.infer<typeof SessionChangesSchema>;

export const CHANGES_UNAVAILABLE_REASONS = [
  'no_repository',
  'own_folder',
  'pushed',
  'no_sandbox',
  'not_a_repository',
  'no_base',
  'timeout',
  'git_failed',
] as const;

export const ChangesUnavailableSchema = z.object({
  available: z.literal(false),
  reason: z
    .enum(CHANGES_UNAVAILABLE_REASONS)
    .describe(
      "`own_folder`: an imported session, run by its CLI in the person's own folder (`folder`, when the CLI recorded it): its changes are there, among whatever else the person changed, and are not read. `pushed`: a session a desktop pushed to this server (`sessiondesk push`) and that did not run here since: its changes are on that desktop, in `folder` when the desktop said where it ran.",
    ),
  message: z.string(),
  folder: z
    .string()
    .optional()
    .describe(
      'With `own_folder`: the folder the CLI ran in. With `pushed`: the folder it ran in on the desktop.',
    ),
});
export type ChangesUnavailable = z.infer<typeof ChangesUnavailableSchema>;

export const SessionChangesResponseSchema = z.discriminatedUnion('available', [
  SessionChangesSchema,
  ChangesUnavailableSchema,
]);
export type SessionChangesResponse = z.infer<typeof SessionChangesResponseSchema>;
