import {
  APPROVAL_RULE_LIMITS,
  PATTERN_SUBJECTS,
  ruleKindOf,
  type ApprovalRule,
} from '../../../../src-shared/approval-rules';
import type { ApprovalTool } from '../../../../src-shared/approvals';

/**
 * The rule a person who allowed a request for the session may make of it: allow its kind, with
 * its command, its one path or its URL as the pattern (none where it has several paths or none).
 */
export function ruleOffered(tool: ApprovalTool): ApprovalRule {
  const kind = ruleKindOf(tool.kind);
  const subject = PATTERN_SUBJECTS[kind];
  const pattern =
    subject === 'command'
      ? tool.command
      : subject === 'url'
        ? tool.url
        : subject === 'paths' && tool.paths?.length === 1
          ? tool.paths[0]
          : undefined;
  // A pattern is matched as a glob: its own `*`, `?` and `\` are made plain.
  const plain = pattern?.replace(/[*?\\]/gu, (ch) => `\\${ch}`);
  return plain !== undefined && plain.length <= APPROVAL_RULE_LIMITS.patternChars
    ? { kind, pattern: plain, decision: 'allow' }
    : { kind, decision: 'allow' };
}

/** Where Settings › Approvals opens with the rule drafted first. */
export function ruleDraftLink(rule: ApprovalRule): string {
  const params = new URLSearchParams({ decision: rule.decision });
  if (rule.kind !== undefined) params.set('kind', rule.kind);
  if (rule.pattern !== undefined) params.set('pattern', rule.pattern);
  return `/settings/approvals?${params.toString()}`;
}
