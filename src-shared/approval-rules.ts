import { z } from 'zod';

/**
 * A workspace's approval rules: what decides an agent's request before anyone is asked. The
 * first rule that matches a request decides it (`allow`, `ask` or `reject`); a request no rule
 * matches is decided by the workspace's `approvals` setting. How patterns match is in
 * src-main/approvals/rules.ts and docs/guides/approvals.md.
 */

/** The Agent Client Protocol's tool kinds: what a tool call does, whatever its title says. */
export const TOOL_KINDS = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'other',
] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

export const RULE_DECISIONS = ['allow', 'ask', 'reject'] as const;
export type RuleDecision = (typeof RULE_DECISIONS)[number];

export const APPROVAL_RULE_LIMITS = {
  rules: 50,
  patternChars: 200,
} as const;

/**
 * What a rule's pattern is matched against, by the request's kind: the command line, the paths
 * the call touches, or the URL it fetches. Nothing for `think` and `other`: no pattern matches them.
 */
export const PATTERN_SUBJECTS: Record<ToolKind, 'command' | 'paths' | 'url' | null> = {
  read: 'paths',
  edit: 'paths',
  delete: 'paths',
  move: 'paths',
  search: 'paths',
  execute: 'command',
  fetch: 'url',
  think: null,
  other: null,
};

/** A request's kind as rules see it: one of the protocol's, anything else `other`. */
export function ruleKindOf(kind: string): ToolKind {
  return (TOOL_KINDS as readonly string[]).includes(kind) ? (kind as ToolKind) : 'other';
}

/** Control characters and bidirectional marks: a pattern holding one could not be read for what it is. */
const UNREADABLE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** A rule as it is stored and recorded with the decisions it made: checked for shape only. */
export const ApprovalRuleShapeSchema = z.strictObject({
  kind: z
    .enum(TOOL_KINDS)
    .optional()
    .describe(
      "The kind of request it applies to (the Agent Client Protocol's tool kinds). Absent: any kind.",
    ),
  pattern: z
    .string()
    .min(1, 'must not be empty: leave the pattern out to match every request of the kind')
    .max(APPROVAL_RULE_LIMITS.patternChars)
    .refine((pattern) => !UNREADABLE.test(pattern), 'must not contain control or bidirectional characters')
    .optional()
    .describe(
      "A glob (`*`, `**`, `?`; `\\` makes the next character plain) matched against the command line (`execute`), the paths (`read`, `edit`, `delete`, `move`, `search`, relative to the session's folder) or the URL (`fetch`). Absent: every request of the kind.",
    ),
  decision: z
    .enum(RULE_DECISIONS)
    .describe('`allow` and `reject` decide at once, never shown in the inbox; `ask` waits for a person.'),
});
export type ApprovalRule = z.infer<typeof ApprovalRuleShapeSchema>;

/** A rule as an owner may write it: it names something to match, and its pattern can match. */
export const ApprovalRuleSchema = ApprovalRuleShapeSchema.superRefine((rule, check) => {
  if (rule.kind === undefined && rule.pattern === undefined) {
    check.addIssue({
      code: 'custom',
      path: ['kind'],
      message:
        'a rule names a kind, a pattern or both: every request no rule matches is decided by `approvals` already',
    });
  }
  if (rule.kind !== undefined && rule.pattern !== undefined && PATTERN_SUBJECTS[rule.kind] === null) {
    check.addIssue({
      code: 'custom',
      path: ['pattern'],
      message: `a request of kind "${rule.kind}" has no command, path or URL for a pattern to match: leave the pattern out`,
    });
  }
});

export const ApprovalRulesSchema = z
  .array(ApprovalRuleSchema)
  .max(APPROVAL_RULE_LIMITS.rules, `must hold at most ${APPROVAL_RULE_LIMITS.rules} rules`)
  .describe(
    'Checked in order before anyone is asked: the first rule that matches decides. A request no rule matches is decided by `approvals`.',
  );

/**
 * Where a workspace may start: reads and searches go, edits go, commands, network fetches and
 * deletions wait for a person.
 */
export const APPROVAL_RULES_TEMPLATE: readonly ApprovalRule[] = [
  { kind: 'read', decision: 'allow' },
  { kind: 'search', decision: 'allow' },
  { kind: 'edit', decision: 'allow' },
  { kind: 'execute', decision: 'ask' },
  { kind: 'fetch', decision: 'ask' },
  { kind: 'delete', decision: 'ask' },
];

/** A rule in a person's words: "allow edit `src/**`". */
export function ruleWords(rule: ApprovalRule): string {
  const what = [rule.kind ?? 'any request', rule.pattern === undefined ? '' : `\`${rule.pattern}\``]
    .filter((part) => part !== '')
    .join(' ');
  return `${rule.decision} ${what}`;
}
