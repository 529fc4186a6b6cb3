import { z } from 'zod';
import {
  AGENT_KINDS,
  LIST_LIMIT_MAX,
  MESSAGE_MAX_CHARS,
  PR_STATUSES,
  SESSION_STATUSES,
  TASK_STATUSES,
  TITLE_UPDATE_MAX_CHARS,
} from './constants.js';
import { ApprovalSchema } from './approvals.js';
import { BRANCH_PATTERN, parseRepoUrl } from './repo-url.js';
import { TranscriptReviewSchema } from './review.js';

export const SessionStatusSchema = z.enum(SESSION_STATUSES);
export const PrStatusSchema = z.enum(PR_STATUSES);
export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;
export type PrStatus = z.infer<typeof PrStatusSchema>;

const Timestamp = z.iso.datetime({ precision: 3 }).describe('ISO 8601 UTC with milliseconds.');

export const AuthorSchema = z.object({
  id: z.string(),
  name: z.string(),
  imageUrl: z.string().optional(),
});
export type Author = z.infer<typeof AuthorSchema>;

export const MetadataSchema = z.object({
  repository: z.string().optional().describe('`<owner>/<repo>`.'),
  branch: z.string().optional(),
  prNumber: z.number().int().optional(),
  prUrl: z.string().optional(),
  prStatus: PrStatusSchema.optional(),
});
export type Metadata = z.infer<typeof MetadataSchema>;

// Messages keep the stream-json shape of common agent CLIs; unknown extra fields are kept.
export const TextBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
export const ThinkingBlockSchema = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
});
export const ToolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const ToolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.unknown())]),
  is_error: z.boolean().optional(),
});
export const ContentBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

export const UserMessageSchema = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({ content: z.string() }),
  review: TranscriptReviewSchema.optional().describe(
    'On a review (`POST /api/sessions/{id}/review`): its comments, each with the lines it quoted; `message.content` is the text the agent was sent.',
  ),
});
/** Most models named in a cost that is unknown; past this the list is cut. */
export const MAX_UNPRICED_MODELS = 20;
const UnpricedModelsSchema = z
  .array(z.string().max(200))
  .max(MAX_UNPRICED_MODELS)
  .describe(
    'The models those runs ran that the price table has no price for; empty when the agent named no model and reported no cost.',
  );

/** Runs that used tokens but have no cost: the agent reported none, and their model has no price. */
export const CostUnknownSchema = z.object({
  runs: z.number().int().min(1).describe('How many runs.'),
  models: UnpricedModelsSchema,
});
export type CostUnknown = z.infer<typeof CostUnknownSchema>;

/** Tokens and cost: of one run (on its result message) or summed over a session's runs. */
export const UsageSchema = z.object({
  inputTokens: z.number().int().describe('Input tokens not read from the prompt cache.'),
  outputTokens: z.number().int(),
  cacheReadTokens: z.number().int(),
  cacheWriteTokens: z.number().int(),
  costUsd: z
    .number()
    .optional()
    .describe(
      'In US dollars: what the runs whose cost is known cost, reported by the agent CLI or priced from its tokens; absent when no run has a known cost. See `costUnknown` for the rest.',
    ),
  costUnknown: CostUnknownSchema.optional().describe(
    'Present when some runs used tokens whose cost is unknown: `costUsd` leaves them out, so it is not the whole cost.',
  ),
});
export type Usage = z.infer<typeof UsageSchema>;

export const AssistantMessageSchema = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({ content: z.array(ContentBlockSchema) }),
  parent_tool_use_id: z
    .string()
    .optional()
    .describe("Set on a sub-agent's message: the id of the tool call that started the sub-agent."),
  notice: z
    .enum(['error', 'info'])
    .optional()
    .describe('Set when the text is not the model speaking but something the agent CLI reported.'),
});
export const ResultMessageSchema = z.looseObject({
  type: z.literal('result'),
  subtype: z.enum(['success', 'error']),
  is_error: z.boolean(),
  result: z.string(),
  duration_ms: z.number(),
  num_turns: z.number(),
  stopped: z
    .literal(true)
    .optional()
    .describe('Present on the result of a run that someone stopped (`POST /api/sessions/{id}/stop`).'),
  error_subtype: z
    .string()
    .optional()
    .describe("On an error: the agent CLI's own reason, e.g. `error_max_turns`."),
  usage: UsageSchema.optional().describe("This run's tokens and cost, when the agent CLI reports them."),
});
export const MessageSchema = z.discriminatedUnion('type', [
  UserMessageSchema,
  AssistantMessageSchema,
  ResultMessageSchema,
]);
export type Message = z.infer<typeof MessageSchema>;
export type UserMessage = z.infer<typeof UserMessageSchema>;
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

export const TaskSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: TaskStatusSchema,
});
export type Task = z.infer<typeof TaskSchema>;

/** What every form of a session carries. */
export const HISTORY_KINDS = ['claude-code', 'codex', 'gemini', 'qwen-code', 'opencode'] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];
/** The agent CLIs' names, as a person knows them. */
export const CLI_NAMES: Readonly<Record<HistoryKind, string>> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  'qwen-code': 'Qwen Code',
  opencode: 'OpenCode',
};

/** Where an imported session came from: an agent CLI's own session file. */
export const SessionSourceSchema = z.object({
  kind: z.enum(HISTORY_KINDS),
  path: z.string().describe("The CLI's session file."),
  cwd: z.string().optional().describe('The working folder the CLI ran in, as it recorded it.'),
  conversationId: z.string().optional().describe("The CLI's own conversation id (what its resume takes)."),
});
export type SessionSource = z.infer<typeof SessionSourceSchema>;

/** Where a session a desktop pushed to this server came from (`sessiondesk push`). */
export const PushedFromSchema = z.object({
  machine: z.string().describe('The host name of the desktop that pushed it, as that desktop sent it.'),
  author: z
    .object({ name: z.string(), email: z.string() })
    .describe("The session's author on that desktop, as the desktop sent it."),
  pushedAt: Timestamp.describe('When its latest part was pushed.'),
  folder: z
    .string()
    .optional()
    .describe(
      'The folder it ran in on that desktop (its sandbox there, or the folder its agent CLI ran in), when the desktop said: its changes are there.',
    ),
});
export type PushedFrom = z.infer<typeof PushedFromSchema>;

export const IsolationSchema = z
  .enum(['sandbox', 'none'])
  .describe(
    "How the latest run's program was held: `sandbox`, in an operating-system sandbox of its own (bubblewrap on Linux: it sees only the session's folder and its CLI's own state, and nothing it started outlives the run); `none`, as the user, without one (no sandbox on this system). Absent for sessions no program ran (the demo agent, imported sessions).",
  );
export type Isolation = z.infer<typeof IsolationSchema>;

const SessionBaseSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: SessionStatusSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  model: z
    .string()
    .describe(
      'The model the session was started with; empty when none was chosen and the agent ran its own default.',
    ),
  author: AuthorSchema,
  metadata: MetadataSchema,
  agent: z
    .enum(AGENT_KINDS)
    .optional()
    .describe('The agent kind of the latest run; `demo` is simulated. Absent before any run.'),
  acpAgent: z
    .string()
    .optional()
    .describe(
      'With `agent: "acp"`: which agent that speaks the Agent Client Protocol ran it (`GET /api/agents`).',
    ),
  usage: UsageSchema.optional().describe("Summed over the session's runs, once one reported usage."),
  agentState: z
    .enum(['queued', 'running', 'needs_input'])
    .optional()
    .describe(
      '`running` while an agent works on the session; `needs_input` while its run waits for someone to decide what the agent asked (`GET /api/approvals`); `queued` while its run waits for a place (the server runs a limited number at once, first come first served). Absent when no run is going or waiting.',
    ),
  source: SessionSourceSchema.optional().describe(
    "Set on a session imported from an agent CLI's own files (`sessiondesk history import`).",
  ),
  isolation: IsolationSchema.optional(),
  pushedFrom: PushedFromSchema.optional().describe(
    "Set on a session a desktop pushed to this server (`sessiondesk push`): the desktop's machine, the session's author there, and when it was pushed. Absent on sessions run or imported here.",
  ),
  stopped: z
    .literal(true)
    .optional()
    .describe(
      'Present while the latest run was stopped on request (`POST /api/sessions/{id}/stop`; its result is marked `stopped: true`): the session is `completed` because someone stopped it, not because the agent finished. Gone once another run starts or a status is set through an update (`PATCH`, `completed` too: a person marking a stopped session completed says its work is done).',
    ),
});

/** Summary form: list, create and update. Create has no lastMessagePreview; update has no previews. */
export const SessionSummarySchema = SessionBaseSchema.extend({
  messageCount: z.number().int(),
  firstMessagePreview: z.string().optional(),
  lastMessagePreview: z.string().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** Full form: get. */
export const SessionFullSchema = SessionBaseSchema.extend({
  messages: z.array(MessageSchema),
  tasks: z.array(TaskSchema),
});
export type SessionFull = z.infer<typeof SessionFullSchema>;

export const StatsSchema = z.object({
  mergesPastWeek: z.number().int(),
  authorsPastWeek: z.number().int(),
  humansPastWeek: z.number().int(),
  humansPromptingNow: z.number().int(),
  costPastWeek: z
    .number()
    .describe(
      "US dollars of the agent runs that ended in the last 7 days and whose cost is known (0 without any); the demo agent's simulated runs are not counted here, nor are the runs `costUnknownPastWeek` counts.",
    ),
  simulatedCostPastWeek: z
    .number()
    .optional()
    .describe(
      "The made-up cost of the demo agent's simulated runs that ended in the last 7 days, apart from `costPastWeek`; present when there is some.",
    ),
  costUnknownPastWeek: z
    .array(
      z.object({
        agent: z.enum(AGENT_KINDS),
        sessions: z.number().int().min(1).describe('Sessions with such a run.'),
        models: UnpricedModelsSchema,
      }),
    )
    .optional()
    .describe(
      'Per agent kind, the sessions with runs that ended in the last 7 days and used tokens of unknown cost, which `costPastWeek` leaves out; present when there are some.',
    ),
});
export type Stats = z.infer<typeof StatsSchema>;

export const ListSessionsResponseSchema = z.object({
  sessions: z.array(SessionSummarySchema),
  stats: StatsSchema,
  nextCursor: z
    .string()
    .optional()
    .describe('Present when `limit` was given and more sessions follow: pass it as `cursor`.'),
  total: z
    .number()
    .int()
    .optional()
    .describe('Present when `limit` was given: how many sessions match the filters, on every page.'),
});
export type ListSessionsResponse = z.infer<typeof ListSessionsResponseSchema>;

export const SessionResponseSchema = z.object({ session: SessionSummarySchema });
export const FullSessionResponseSchema = z.object({ session: SessionFullSchema });

const nonBlank = (s: string) => s.trim() !== '';

/**
 * A model name as agent CLIs take it (`claude-opus-4-6`, `gpt-5.1-codex`, `models/gemini-2.5-pro`,
 * `us.anthropic.claude…:0`): it reaches a command line, so it can never start an option.
 */
export const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/u;

export const CreateSessionBodySchema = z.strictObject({
  organizationId: z.string().min(1).describe('Workspace in which to create the session.'),
  initialMessage: z
    .string()
    .max(MESSAGE_MAX_CHARS)
    .refine(nonBlank, 'must not be blank')
    .optional()
    .describe('Initial prompt for the agent. The title is generated from it.'),
  repoUrl: z
    .string()
    .max(500)
    .refine((s) => parseRepoUrl(s) !== null, 'must look like https://<host>/<owner>/<repo>')
    .optional(),
  baseBranch: z
    .string()
    .regex(BRANCH_PATTERN, 'must be a valid branch name')
    .optional()
    .describe('Default `main`. Used only with `repoUrl`.'),
  model: z
    .string()
    .max(200)
    .regex(
      MODEL_PATTERN,
      'must be a model name: letters, digits and . _ : / @ -, starting with a letter or digit',
    )
    .optional()
    .describe(
      "Default `claude-opus-4-6` for the demo agent. The other agents get none unless one is given: they run with their own configured default, and the session's `model` is empty.",
    ),
});
export type CreateSessionBody = z.infer<typeof CreateSessionBodySchema>;

export const UpdateSessionBodySchema = z.strictObject({
  title: z
    .string()
    .refine(nonBlank, 'must not be blank')
    .refine((s) => s.trim().length <= TITLE_UPDATE_MAX_CHARS, {
      message: `must be at most ${TITLE_UPDATE_MAX_CHARS} characters`,
    })
    .optional(),
  status: SessionStatusSchema.optional(),
});
export type UpdateSessionBody = z.infer<typeof UpdateSessionBodySchema>;

const QueryString = z.string().max(500);

/**
 * A whole number in the query string, from `min` to `max`: anything else ("abc", 2.5, 0) is
 * refused with a message that says what is wanted, not a type error.
 */
export function wholeNumberQuery(min: number, max?: number) {
  const error = `must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}`;
  const number = z.coerce.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? number : number.max(max, { error });
}

/**
 * An `apiKey` in the query is read by the auth layer before validation; the API document
 * describes it as a security scheme of the routes that take a key.
 */
export const OrgQuerySchema = z.object({ organizationId: QueryString.optional() });

const ACP_AGENT_FILTER = /^acp:[a-z0-9][a-z0-9._-]{0,39}$/u;

/** `agent=` of the list and of search: the agent kind of a session's latest run, an imported session's CLI. */
export const AgentFilterSchema = z
  .string()
  .refine((value) => (AGENT_KINDS as readonly string[]).includes(value) || ACP_AGENT_FILTER.test(value), {
    message: `must be one of ${AGENT_KINDS.map((kind) => `"${kind}"`).join(', ')}, or "acp:" and an ACP agent's id`,
  })
  .describe(
    "Only sessions run by this agent kind (an imported session's is its CLI's); `acp:ID` only those an ACP agent ran, by its `acpAgent` id (`acp` alone: any ACP agent).",
  );
export type AgentFilter = z.infer<typeof AgentFilterSchema>;

/**
 * `source=` of the list: `imported`, the sessions imported from an agent CLI's own files (those
 * continued here since included); `run`, those started in Session Desk.
 */
export const SESSION_SOURCES = ['imported', 'run'] as const;
export type SessionSourceFilter = (typeof SESSION_SOURCES)[number];

export const ListSessionsQuerySchema = OrgQuerySchema.extend({
  limit: wholeNumberQuery(1, LIST_LIMIT_MAX).optional(),
  cursor: QueryString.optional(),
  status: SessionStatusSchema.optional(),
  repository: QueryString.optional().describe(
    'Case-insensitive: `<owner>/<repo>`, an `<owner>` (all of its repositories), or a repository URL.',
  ),
  authorId: QueryString.optional(),
  q: z.string().max(200).optional().describe('Matches the title and the first message.'),
  agent: AgentFilterSchema.optional(),
  source: z
    .enum(SESSION_SOURCES)
    .optional()
    .describe(
      "`imported`: sessions imported from an agent CLI's own files (continued here since or not); `run`: sessions started in Session Desk.",
    ),
});
export type ListSessionsQuery = z.infer<typeof ListSessionsQuerySchema>;

export const SessionParamsSchema = z.object({ sessionId: z.string().max(100) });

/** Messages per page at most, and the page size without `limit`. */
export const MESSAGES_PAGE_MAX = 1000;
export const MESSAGES_PAGE_DEFAULT = 100;

export const MessagesPageQuerySchema = OrgQuerySchema.extend({
  after: wholeNumberQuery(0)
    .optional()
    .describe('How many messages to skip from the start (default 0): pass `nextAfter` to continue.'),
  limit: wholeNumberQuery(1, MESSAGES_PAGE_MAX)
    .optional()
    .describe(
      `At most this many messages (default ${MESSAGES_PAGE_DEFAULT}); a page also stops after about 4 MiB.`,
    ),
});

export const MessagesPageResponseSchema = z.object({
  messages: z.array(MessageSchema),
  total: z.number().int().describe('Messages in the session now.'),
  nextAfter: z.number().int().optional().describe('Present when more messages follow: pass it as `after`.'),
});
export type MessagesPageResponse = z.infer<typeof MessagesPageResponseSchema>;

export const RepositoriesResponseSchema = z.object({
  repositories: z.array(z.string()).describe("Distinct `<owner>/<repo>` of the workspace's sessions."),
});

/** Where a follow-up to an imported session goes on: the CLI's own working folder, or a fresh clone. */
export const CONTINUE_IN = ['original', 'sandbox'] as const;
export type ContinueIn = (typeof CONTINUE_IN)[number];

export const FollowUpBodySchema = z.strictObject({
  content: z.string().max(MESSAGE_MAX_CHARS).refine(nonBlank, 'must not be blank'),
  continueIn: z
    .enum(CONTINUE_IN)
    .optional()
    .describe(
      "Only for a session imported from an agent CLI's files (it is required there): `original` resumes the CLI's conversation in the folder it ran in (the person's own work tree; the administrator only), `sandbox` in a fresh clone of the session's repository.",
    ),
  continueFolder: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'With `continueIn: "original"` (required there): the folder the person confirms the agent may work in, which must be the session\'s `source.cwd` (409 when it is not).',
    ),
});
export type FollowUpBody = z.infer<typeof FollowUpBodySchema>;

/** What the live event streams send; `data` of each server-sent event. */
export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session.created'), sessionId: z.string(), session: SessionSummarySchema }),
  z.object({ type: z.literal('session.updated'), sessionId: z.string(), session: SessionSummarySchema }),
  z.object({
    type: z.literal('message.added'),
    sessionId: z.string(),
    index: z.number().int().describe('Position in the conversation, from 0.'),
    message: MessageSchema,
  }),
  z.object({ type: z.literal('tasks.changed'), sessionId: z.string(), tasks: z.array(TaskSchema) }),
  z.object({ type: z.literal('approval.created'), sessionId: z.string(), approval: ApprovalSchema }),
  z.object({ type: z.literal('approval.decided'), sessionId: z.string(), approval: ApprovalSchema }),
  z.object({
    type: z.literal('reset'),
    reason: z.string().describe('Events were missed (too old to replay): fetch afresh.'),
  }),
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;
