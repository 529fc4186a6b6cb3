import { z } from 'zod';
import {
  APPROVAL_MODES,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  MAX_APPROVAL_TIMEOUT_SECONDS,
} from './approvals.js';
import { ApprovalRulesSchema, RULE_DECISIONS } from './approval-rules.js';
import { AGENT_KINDS } from './constants.js';

export const EmailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/u, 'must be an email address');

/** Length only: a local app should not dictate composition rules. */
export const NewPasswordSchema = z.string().min(8, 'must be at least 8 characters').max(1024);

export const UserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  imageUrl: z.string().optional(),
});
export type User = z.infer<typeof UserSchema>;

export const WorkspaceRoleSchema = z.enum(['owner', 'member']);
export const WorkspaceSchema = z.object({
  organizationId: z.string(),
  name: z.string(),
  role: WorkspaceRoleSchema,
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const SignInBodySchema = z.strictObject({
  email: z.string().max(254),
  password: z.string().max(1024),
});
export const SignInResponseSchema = z.object({ user: UserSchema });
/** The launch token, from the URL `serve` printed (or the desktop window's), traded for a cookie. */
export const LaunchBodySchema = z.strictObject({ token: z.string().min(1).max(256) });
export const MeResponseSchema = z.object({
  user: UserSchema,
  workspaces: z.array(WorkspaceSchema),
  administrator: z
    .boolean()
    .describe(
      "Whether the user is the installation's administrator (the account made at first-run setup): only they add folders of the machine as history sources and continue an imported session in its original folder.",
    ),
  teamServer: z
    .boolean()
    .describe(
      "Whether this is a team server (PostgreSQL, shared by teammates) rather than a person's desktop.",
    ),
});
export type MeResponse = z.infer<typeof MeResponseSchema>;

export const ApiKeySummarySchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  label: z.string(),
  prefix: z.string().describe('The first characters of the key, for recognising it.'),
  createdAt: z.string(),
  lastUsedAt: z.string().optional(),
  createdBy: z
    .object({ userId: z.string(), name: z.string() })
    .optional()
    .describe(
      'The member who created it in the dashboard; absent for keys the administrator made with the CLI.',
    ),
  canApprove: z
    .literal(true)
    .optional()
    .describe(
      "Present when an owner let the key decide agents' requests (`POST /api/approvals/{id}`); every key may list them.",
    ),
  pushOnly: z
    .literal(true)
    .optional()
    .describe(
      "Present on a key that may only push a desktop's sessions (`POST /api/push/sessions`, `GET /api/push/sessions/{id}`); every other route answers it 403.",
    ),
});
export type ApiKeySummary = z.infer<typeof ApiKeySummarySchema>;

/** The only response that ever carries a whole key. */
export const CreatedApiKeySchema = ApiKeySummarySchema.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

/**
 * Control characters (escape sequences among them) and the bidirectional overrides: refused in
 * names and labels, which terminals and pages print.
 */
const CONTROL = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;
export const noControl = (s: string) => !CONTROL.test(s);
export const NO_CONTROL_MESSAGE = 'must not contain control characters (such as terminal escape sequences)';

const Name = z.string().trim().min(1, 'must not be blank').max(200).refine(noControl, NO_CONTROL_MESSAGE);
const Label = z.string().trim().max(200).refine(noControl, NO_CONTROL_MESSAGE);
const ImageUrl = z
  .string()
  .max(2000)
  .regex(/^https?:\/\/\S+$/u, 'must be an http(s) URL');

export const CreateUserBodySchema = z.strictObject({
  email: EmailSchema,
  name: Name,
  password: NewPasswordSchema,
  imageUrl: ImageUrl.optional(),
});
export const SetPasswordBodySchema = z.strictObject({ email: EmailSchema, password: NewPasswordSchema });
export const AddMemberBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  email: EmailSchema,
});
export const CreateKeyBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  label: Label.optional(),
  canApprove: z.boolean().optional(),
  pushOnly: z.boolean().optional(),
});
export const RevokeKeyBodySchema = z.strictObject({
  organizationId: z.string().max(100),
  keyId: z.string().max(100),
});
export const ListKeysQuerySchema = z.object({ organizationId: z.string().max(100) });

export const MemberSchema = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  imageUrl: z.string().optional(),
  role: WorkspaceRoleSchema,
  joinedAt: z.string(),
});
export type Member = z.infer<typeof MemberSchema>;
/** An owner's invitation of an email without an account: they join when they first sign in. */
export const InvitationSchema = z.object({
  email: z.string(),
  invitedAt: z.string(),
  invitedBy: z
    .object({ userId: z.string(), name: z.string() })
    .optional()
    .describe('The owner who invited; absent when the administrator did, with the command line.'),
});
export type Invitation = z.infer<typeof InvitationSchema>;
export const MembersResponseSchema = z.object({
  members: z.array(MemberSchema),
  invitations: z
    .array(InvitationSchema)
    .describe('Emails invited that have not signed in yet, oldest first.'),
});
export const MemberResponseSchema = z.object({ member: MemberSchema });
export const InvitationResponseSchema = z.object({ invitation: InvitationSchema });

export const KeysResponseSchema = z.object({ keys: z.array(ApiKeySummarySchema) });
export const CreatedKeyResponseSchema = z.object({ key: CreatedApiKeySchema });
export const WorkspaceResponseSchema = z.object({ workspace: WorkspaceSchema });
export const WorkspacesResponseSchema = z.object({ workspaces: z.array(WorkspaceSchema) });

/** The id of an ACP agent: lower-case words joined by hyphens. */
export const ACP_AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/u;

/** The agents first-run setup offers for the first workspace: the CLIs, the ACP agents found, the demo. */
export const SETUP_AGENTS = ['claude-code', 'codex', 'gemini', 'acp', 'demo'] as const;
export const SetupAgentSchema = z.object({
  kind: z.enum(SETUP_AGENTS),
  acpAgent: z.string().optional().describe('For `kind: "acp"`: the id to choose it by, as `acpAgent`.'),
  name: z.string(),
  simulated: z.boolean().describe('True for the demo agent: its runs are made up, not real work.'),
  found: z.boolean().describe('Whether its program is installed on this machine (always true for `demo`).'),
  version: z.string().optional().describe('What `<program> --version` printed, when it could say.'),
  install: z
    .string()
    .optional()
    .describe('For an agent not installed: the command that installs it (`npm install -g …`).'),
});
export type SetupAgent = z.infer<typeof SetupAgentSchema>;
export const SetupStatusSchema = z.object({
  needed: z.boolean().describe("No account exists yet but the demo's: the owner account can be created."),
  demo: z.boolean().optional().describe('The demo workspace exists.'),
  demoAvailable: z
    .boolean()
    .optional()
    .describe('Whether the demo workspace can be made here: false on a team server (PostgreSQL).'),
  agents: z
    .array(SetupAgentSchema)
    .optional()
    .describe(
      'While setup is needed: the agents the first workspace can use: the three agent CLIs (installed or not), every ACP agent installed, and the demo agent.',
    ),
  launchToken: z
    .boolean()
    .describe(
      'Whether this browser presented the launch token (the URL `serve` printed): setup and the demo sign-in need it.',
    ),
  setupCode: z
    .boolean()
    .describe(
      'Whether the launch token is a setup code to type in (a server with a public URL puts no secret in a URL): `serve` prints it on its terminal.',
    ),
});
export const SetupBodySchema = z.strictObject({
  email: EmailSchema,
  name: Name,
  password: NewPasswordSchema,
  workspaceName: Name,
  agent: z
    .enum(SETUP_AGENTS)
    .optional()
    .describe(
      "The first workspace's agent (an agent CLI must be installed). Without it the workspace has none chosen and runs the simulated demo agent, labelled so, until an owner chooses in Settings.",
    ),
  acpAgent: z
    .string()
    .regex(ACP_AGENT_ID_PATTERN, 'must be the id of an ACP agent GET /api/setup lists')
    .optional()
    .describe('With `agent: "acp"`: which ACP agent (one `GET /api/setup` lists as installed).'),
});
export const SetupResponseSchema = z.object({ user: UserSchema, workspace: WorkspaceSchema });

export const NewWorkspaceBodySchema = z.strictObject({ name: Name });
/**
 * Adds an existing user by email, or creates one when a name and password come along; an email
 * without an account is invited.
 */
export const NewMemberBodySchema = z.strictObject({
  email: EmailSchema,
  name: Name.optional(),
  password: NewPasswordSchema.optional(),
});
export const NewKeyBodySchema = z.strictObject({
  label: Label.optional(),
  canApprove: z
    .boolean()
    .optional()
    .describe("Owners only: the key may decide agents' requests too, not only list them."),
  pushOnly: z
    .boolean()
    .optional()
    .describe("The key may only push a desktop's sessions (`sessiondesk push`), and read nothing."),
});
export const WorkspaceParamsSchema = z.object({ organizationId: z.string().max(100) });
export const MemberParamsSchema = WorkspaceParamsSchema.extend({ userId: z.string().max(100) });
export const InvitationParamsSchema = WorkspaceParamsSchema.extend({ email: EmailSchema });
export const KeyParamsSchema = WorkspaceParamsSchema.extend({ keyId: z.string().max(100) });

export { AGENT_KINDS };
/** The name of a command the administrator defined (`sessiondesk agent-command set NAME`). */
export const AGENT_COMMAND_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,39}$/u;
/**
 * Which agent runs a workspace's sessions. `command` runs a local CLI without a shell: one
 * the administrator defined, by `commandName`. A `command` array is only ever shown (the
 * environment's default); sending one is refused, as choosing a program is the
 * administrator's privilege. `claude-code`, `codex` and `gemini` run that CLI with its own
 * command line and parser.
 */
/**
 * A host agents may reach when a workspace limits the network: a name or IPv4 address, or
 * `*.` and a name for its subdomains, with an optional `:port` (any port without one).
 */
export const HOST_PATTERN =
  /^(?:\*\.)?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::[1-9][0-9]{0,4})?$/u;
export const MAX_ALLOWED_HOSTS = 200;
export const HostPatternSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(260)
  .regex(HOST_PATTERN, 'must be a host name, an IPv4 address or *.name, with an optional :port')
  .refine((pattern) => Number(pattern.split(':')[1] ?? '1') <= 65535, 'must have a port up to 65535');

export const AgentSettingsSchema = z.strictObject({
  agent: z.enum(AGENT_KINDS),
  acpAgent: z
    .string()
    .regex(ACP_AGENT_ID_PATTERN, 'must be the id of an ACP agent GET /api/agents lists')
    .optional()
    .describe(
      'With `agent: "acp"`: which agent that speaks the Agent Client Protocol (see `GET /api/agents`).',
    ),
  commandName: z
    .string()
    .regex(AGENT_COMMAND_NAME_PATTERN, 'must be the name of a command the administrator defined')
    .optional()
    .describe('A command the administrator defined with `sessiondesk agent-command set NAME -- …`.'),
  command: z
    .array(z.string().min(1).max(1000))
    .min(1)
    .max(50)
    .optional()
    .describe(
      'Program and arguments; {prompt}, {model} and {sessionId} are replaced, each as one argument. Read only: defined by the administrator.',
    ),
  timeoutMs: z
    .number()
    .int()
    .min(1000)
    .max(24 * 60 * 60 * 1000)
    .optional(),
  allowedHosts: z
    .array(HostPatternSchema)
    .min(1, 'must list at least one host; to leave the network open, leave allowedHosts out')
    .max(MAX_ALLOWED_HOSTS)
    .optional()
    .describe(
      "The hosts agents' programs may reach, through Session Desk's proxy: `example.com`, `*.example.com` (its subdomains), each with an optional `:port`; `127.0.0.1` and `localhost` only when listed. Absent: the network is open. Enforced only where runs have an operating-system sandbox (see `networkEnforced`).",
    ),
  approvals: z
    .enum(APPROVAL_MODES)
    .optional()
    .describe(
      '`auto` (the default): every tool call is allowed inside the sandbox. `ask`: what an agent asks before it acts waits in `GET /api/approvals` for a member to decide.',
    ),
  approvalTimeoutSeconds: z
    .number()
    .int()
    .min(5)
    .max(MAX_APPROVAL_TIMEOUT_SECONDS)
    .optional()
    .describe(
      `With \`approvals: "ask"\`: how long a request waits before it is rejected (default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS} seconds, 30 minutes).`,
    ),
  approvalRules: ApprovalRulesSchema.optional(),
});
export type AgentSettings = z.infer<typeof AgentSettingsSchema>;

/** Draft rules to try on the workspace's recent requests before they are saved. */
export const ApprovalRulesPreviewBodySchema = z.strictObject({
  approvalRules: ApprovalRulesSchema,
  approvals: z
    .enum(APPROVAL_MODES)
    .optional()
    .describe("What decides the requests no rule matches; the workspace's own setting when absent."),
});
export type ApprovalRulesPreviewBody = z.infer<typeof ApprovalRulesPreviewBodySchema>;

export const ApprovalRulesPreviewSchema = z.object({
  considered: z
    .number()
    .int()
    .describe("How many of the workspace's requests were tried: its latest, at most 50."),
  rules: z
    .array(
      z.object({
        decided: z
          .number()
          .int()
          .describe('How many of them this rule would have decided (it matched first).'),
        examples: z.array(z.string()).describe('The titles of up to 3 of them, the latest first.'),
      }),
    )
    .describe('One entry per draft rule, in order.'),
  rest: z.object({
    count: z.number().int().describe('How many no rule matches.'),
    decision: z
      .enum(RULE_DECISIONS)
      .describe('What `approvals` decides for them: `allow` (`auto`) or `ask`.'),
  }),
});
export type ApprovalRulesPreview = z.infer<typeof ApprovalRulesPreviewSchema>;

/**
 * The agents a workspace can be made with (`sessiondesk workspace create --agent`): those that
 * need no program chosen, as first-run setup offers them, and an ACP agent by its id.
 */
export const NEW_WORKSPACE_AGENTS = [...SETUP_AGENTS, 'acp'] as const;
export const CreateWorkspaceBodySchema = z.strictObject({
  name: Name,
  ownerEmail: EmailSchema,
  agent: z.enum(NEW_WORKSPACE_AGENTS).optional(),
  acpAgent: AgentSettingsSchema.shape.acpAgent,
});
export const NamedAgentCommandSchema = z.object({ name: z.string(), command: z.array(z.string()) });
export const AgentSettingsResponseSchema = z.object({
  settings: AgentSettingsSchema,
  source: z.enum(['workspace', 'environment', 'default']),
  /** The commands the administrator defined, to choose from. */
  commands: z.array(NamedAgentCommandSchema),
  networkEnforced: z
    .boolean()
    .describe(
      'Whether `allowedHosts` can be enforced here: false where agents run without an operating-system sandbox, whose programs then reach any host.',
    ),
  networkProblem: z.string().optional().describe('Why `allowedHosts` cannot be enforced, when it cannot.'),
  demoOnly: z
    .string()
    .optional()
    .describe(
      "Set when the signed-in account may choose the demo agent only (the demo's accounts), saying so: any other `agent` is refused (403). Its approvals and their time to decide may still change.",
    ),
  sandbox: z
    .object({
      isolation: z.enum(['sandbox', 'none']),
      detail: z.string(),
    })
    .describe(
      "How agents' programs run on this machine: `sandbox`, each run in an operating-system sandbox of its own (bubblewrap on Linux); `none`, as your user, with `detail` saying why there is no sandbox.",
    ),
});

/** An agent kind as this server sees it: for the CLI kinds, whether its program is installed. */
export const AgentKindInfoSchema = z.object({
  kind: z.enum(AGENT_KINDS),
  acpAgent: z.string().optional().describe('For `kind: "acp"`: the id to choose it by, as `acpAgent`.'),
  name: z.string(),
  simulated: z.boolean().describe('True for the demo agent: its runs are made up, not real work.'),
  program: z.string().optional().describe('The program a CLI kind runs, as looked up on PATH.'),
  envVar: z.string().optional().describe('The environment variable that names its program instead.'),
  found: z.boolean().describe('Whether it can run here (always true for `demo` and `command`).'),
  path: z.string().optional().describe('Where its program was found.'),
  version: z.string().optional().describe('What `<program> --version` printed, when it could say.'),
  problem: z.string().optional().describe('Why it cannot run, when it cannot.'),
  npm: z.string().optional().describe('The npm package its program installs from, when it does.'),
  install: z
    .string()
    .optional()
    .describe('The command that installs it (`npm install -g opencode-ai`), when it comes from npm.'),
  tested: z
    .boolean()
    .optional()
    .describe(
      "For `kind: \"acp\"`: whether Session Desk's own tests run it. False for the ACP registry's other agents (offered when installed, not tested here, as they need a sign-in) and the administrator's (`sessiondesk acp-agent set`).",
    ),
});
export type AgentKindInfo = z.infer<typeof AgentKindInfoSchema>;
export const AgentKindsResponseSchema = z.object({ agents: z.array(AgentKindInfoSchema) });
