import { z } from 'zod';
import { EmailSchema, NO_CONTROL_MESSAGE, noControl } from '../../src-shared/accounts.js';
import { TITLE_UPDATE_MAX_CHARS } from '../../src-shared/constants.js';
import { ApprovalSchema } from '../../src-shared/approvals.js';
import { idPattern } from '../../src-shared/ids.js';
import { nestedDeeperThan, TOO_DEEP_MESSAGE } from '../../src-shared/json-depth.js';
import { BRANCH_PATTERN, parseRepoUrl } from '../../src-shared/repo-url.js';
import { AGENT_KINDS } from '../../src-shared/constants.js';
import {
  AuthorSchema,
  MessageSchema,
  MetadataSchema,
  SessionStatusSchema,
  TaskSchema,
  UsageSchema,
} from '../../src-shared/sessions.js';

/**
 * The export format (`sessiondesk export`, read back by `sessiondesk import`).
 *
 * Version 2, NDJSON: a header line; per session a `session` line (everything but its
 * messages, with `messageCount`), one `message` line per message and a `session-end` line;
 * then an `end` line. Nothing needs a whole session in memory, and a file cut anywhere is
 * detected (a missing `session-end` or `end`).
 * Version 2, JSON: one document, the header's members and `sessions`, an array of whole
 * session objects (the `session` line's members without `messageCount`, plus `messages` and
 * `messageMeta`).
 * Version 1 (still read): NDJSON with one whole session object per line, no end line.
 *
 * A session is the API's full form (`GET /api/sessions/{id}`) plus what it takes to rebuild
 * it: the author's email, the repository URL and base branch, the merge time, when each
 * message was added and by whom, the agent CLI's conversation and each run's usage.
 */
export const EXPORT_TYPE = 'sessiondesk.export';
/** The version `sessiondesk export` writes. */
export const EXPORT_VERSION = 2;
/** The versions `sessiondesk import` reads. */
export const READABLE_VERSIONS = [1, 2] as const;
export const EXPORT_FORMATS = ['ndjson', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const Timestamp = z.iso.datetime({ precision: 3 });

export const ExportHeaderSchema = z.object({
  type: z.literal(EXPORT_TYPE),
  version: z.union([z.literal(READABLE_VERSIONS[0]), z.literal(READABLE_VERSIONS[1])]),
  organizationId: z.string(),
  workspace: z.object({ name: z.string() }),
  exportedAt: Timestamp,
  /** How many sessions follow; an import that finds fewer says the file may be cut short. */
  sessionCount: z.number().int().min(0).optional(),
});
export type ExportHeader = z.infer<typeof ExportHeaderSchema>;

export const MessageMetaSchema = z.object({
  createdAt: Timestamp,
  /** Who sent it, for a person's prompt; absent for the agent's output. */
  authorEmail: z.string().optional(),
});

const AgentKindSchema = z.enum(AGENT_KINDS);

/** One agent run that reported usage (the agent_runs table). */
export const ExportRunSchema = z.object({
  kind: AgentKindSchema,
  conversationId: z.string().min(1).max(500).optional(),
  endedAt: Timestamp,
  usage: UsageSchema,
});
export type ExportRun = z.infer<typeof ExportRunSchema>;

/**
 * A message as it may be stored: what agents write, nested no deeper than any reader walks
 * (src-shared/json-depth.ts); a deeper one is refused with a 400, before anything serializes it.
 */
const StorableMessageSchema = MessageSchema.refine((m) => !nestedDeeperThan(m), TOO_DEEP_MESSAGE);

/** What a session's agents asked and who answered (the approvals table), without the session's id. */
export const ExportApprovalSchema = ApprovalSchema.omit({ sessionId: true })
  .extend({
    id: z.string().regex(idPattern('approval'), 'must be a request id (apr_…)'),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    decidedAt: Timestamp.optional(),
  })
  .refine((a) => !nestedDeeperThan(a), TOO_DEEP_MESSAGE);
export type ExportApproval = z.infer<typeof ExportApprovalSchema>;

/** Everything of a session but its messages: the first line of a session in version 2. */
const sessionFields = z.object({
  type: z.literal('session'),
  id: z.string().regex(idPattern('session'), 'must be a session id (ses_…)'),
  title: z
    .string()
    .refine((s) => s.trim() !== '', 'must not be blank')
    .refine(
      (s) => s.length <= TITLE_UPDATE_MAX_CHARS,
      `must be at most ${TITLE_UPDATE_MAX_CHARS} characters`,
    ),
  status: SessionStatusSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  // Empty: the session ran with its agent's own default model.
  model: z.string().max(200),
  author: AuthorSchema.extend({ email: EmailSchema }),
  // The same rules as the API's: a branch or URL from a file may reach git on a follow-up.
  metadata: MetadataSchema.extend({
    branch: z.string().regex(BRANCH_PATTERN, 'must be a valid branch name').optional(),
    prUrl: z
      .string()
      .max(2000)
      .regex(/^https?:\/\/\S+$/u, 'must be an http(s) URL')
      .optional(),
  }),
  repoUrl: z
    .string()
    .max(500)
    .refine((s) => parseRepoUrl(s) !== null, 'must look like https://<host>/<owner>/<repo>')
    .optional(),
  baseBranch: z.string().regex(BRANCH_PATTERN, 'must be a valid branch name'),
  prMergedAt: Timestamp.optional(),
  tasks: z.array(TaskSchema),
  /** The kind of the latest run, and the usage summed over the runs (the API's fields). */
  agent: AgentKindSchema.optional(),
  usage: UsageSchema.optional(),
  /** The agent CLI's own conversation id, which a follow-up resumes (absent in version 1). */
  conversation: z.object({ kind: AgentKindSchema, id: z.string().min(1).max(500) }).optional(),
  runs: z.array(ExportRunSchema).optional(),
  approvals: z.array(ExportApprovalSchema).optional(),
  /**
   * The folder it ran in on the machine that exported it (its sandbox, or the folder its agent
   * CLI ran in): a team server receiving a push shows it, as where the session's changes are.
   */
  folder: z.string().min(1).max(4096).refine(noControl, NO_CONTROL_MESSAGE).optional(),
});

type SessionFields = z.infer<typeof sessionFields>;

/** The rules between fields that the API enforces too. */
function checkSessionFields(session: SessionFields, ctx: z.RefinementCtx): void {
  const { prNumber, prUrl, prStatus } = session.metadata;
  const given = [prNumber, prUrl, prStatus].filter((v) => v !== undefined).length;
  if (given !== 0 && given !== 3) {
    ctx.addIssue({
      code: 'custom',
      path: ['metadata'],
      message: 'prNumber, prUrl and prStatus go together',
    });
  }
  const repository = session.repoUrl === undefined ? undefined : parseRepoUrl(session.repoUrl)?.repository;
  if (repository !== undefined && session.metadata.repository !== repository) {
    ctx.addIssue({
      code: 'custom',
      path: ['metadata', 'repository'],
      message: `must be ${repository}, the repository of repoUrl`,
    });
  }
  if (session.repoUrl === undefined && session.metadata.repository !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['repoUrl'], message: 'is required with metadata.repository' });
  }
  if (new Set(session.tasks.map((t) => t.id)).size !== session.tasks.length) {
    ctx.addIssue({ code: 'custom', path: ['tasks'], message: 'task ids must be unique' });
  }
}

/** A whole session: a line of version 1, an entry of a JSON document. */
export const ExportSessionSchema = sessionFields
  .extend({
    messages: z.array(StorableMessageSchema),
    messageMeta: z.array(MessageMetaSchema).optional(),
  })
  .superRefine((session, ctx) => {
    checkSessionFields(session, ctx);
    if (session.messageMeta && session.messageMeta.length !== session.messages.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['messageMeta'],
        message: `has ${session.messageMeta.length} entries for ${session.messages.length} messages`,
      });
    }
  });
export type ExportSession = z.infer<typeof ExportSessionSchema>;

/** Version 2: a session's first line; its messages follow on lines of their own. */
export const SessionHeadSchema = sessionFields
  .extend({ messageCount: z.number().int().min(0) })
  .superRefine(checkSessionFields);
export type SessionHead = z.infer<typeof SessionHeadSchema>;

/** Version 2: one message of the session above, with when it was added and by whom. */
export const MessageLineSchema = MessageMetaSchema.extend({
  type: z.literal('message'),
  message: StorableMessageSchema,
});

/** Version 2: closes a session; a file cut inside a session lacks it. */
export const SessionEndSchema = z.object({
  type: z.literal('session-end'),
  id: z.string(),
  messageCount: z.number().int().min(0),
});

/** Version 2: the last line; a file cut between sessions lacks it. */
export const ExportEndSchema = z.object({ type: z.literal('end'), sessionCount: z.number().int().min(0) });

/** What an import did; the CLI prints it, the admin route returns it. */
export const ImportReportSchema = z.object({
  organizationId: z.string(),
  format: z.enum(EXPORT_FORMATS),
  source: z.object({ organizationId: z.string(), workspaceName: z.string(), exportedAt: z.string() }),
  imported: z.number().int(),
  messages: z.number().int(),
  /** Sessions whose id this workspace already holds: the import is idempotent. */
  alreadyPresent: z.number().int(),
  skippedCount: z.number().int(),
  /** The first skipped entries, where (`line 5`, `session 3`) and why. */
  skipped: z.array(z.object({ at: z.string(), reason: z.string() })),
  /** Sessions whose author has no account here, given to the workspace's owner. */
  reattributed: z
    .object({
      ownerEmail: z.string(),
      authors: z.array(z.object({ email: z.string(), sessions: z.number().int() })),
    })
    .optional(),
  /** Set when the file holds fewer sessions than its header announced. */
  truncated: z.object({ announced: z.number().int(), found: z.number().int() }).optional(),
});
export type ImportReport = z.infer<typeof ImportReportSchema>;

export const ExportQuerySchema = z.object({
  organizationId: z.string().max(100),
  format: z.enum(EXPORT_FORMATS).default('ndjson'),
});
export const ImportQuerySchema = z.object({ organizationId: z.string().max(100) });

/** The first few problems zod found, as one line. */
export function describeIssues(error: z.ZodError, limit = 3): string {
  const issues = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path.map(String).join('.');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
  const more = error.issues.length - limit;
  return more > 0 ? `${issues.join('; ')} (and ${more} more)` : issues.join('; ');
}
