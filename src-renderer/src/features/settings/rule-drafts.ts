import {
  ApprovalRuleSchema,
  ApprovalRulesSchema,
  PATTERN_SUBJECTS,
  type ApprovalRule,
  type RuleDecision,
  type ToolKind,
} from '../../../../src-shared/approval-rules';
import type { ApiError } from '../../api/client';

/** Settings › Approvals' draft: the rules as the form holds them until they are saved. */

/** A rule as the form holds it: a kind or none, a pattern or empty, and a key of its own. */
export interface DraftRule {
  key: number;
  kind: ToolKind | '';
  pattern: string;
  decision: RuleDecision;
  /** Drafted from a request in the Inbox, not saved yet. */
  offered?: boolean;
}

let nextKey = 1;
export function drafted(rule: ApprovalRule, offered = false): DraftRule {
  return {
    key: nextKey++,
    kind: rule.kind ?? '',
    pattern: rule.pattern ?? '',
    decision: rule.decision,
    ...(offered ? { offered } : {}),
  };
}

export function ruleOf(draft: DraftRule): ApprovalRule {
  return {
    ...(draft.kind === '' ? {} : { kind: draft.kind }),
    ...(draft.pattern === '' ? {} : { pattern: draft.pattern }),
    decision: draft.decision,
  };
}

export const DECISION_WORDS: Record<RuleDecision, string> = {
  allow: 'Allow',
  ask: 'Ask',
  reject: 'Reject',
};

/** What a pattern is matched against, for the field's placeholder. */
export function patternHint(kind: ToolKind | ''): string {
  if (kind === '') return 'any: a command, path or URL glob';
  switch (PATTERN_SUBJECTS[kind]) {
    case 'command':
      return 'command, e.g. npm test*';
    case 'paths':
      return 'path, e.g. src/**';
    case 'url':
      return 'URL, e.g. https://docs.example.com/**';
    default:
      return 'no pattern for this kind';
  }
}

/** The rule drafted from the Inbox's offer (`?kind=…&pattern=…&decision=…`), if the address has one. */
export function offeredRule(params: URLSearchParams): ApprovalRule | null {
  if (!params.has('decision')) return null;
  const parsed = ApprovalRuleSchema.safeParse({
    ...(params.get('kind') ? { kind: params.get('kind') } : {}),
    ...(params.get('pattern') ? { pattern: params.get('pattern') } : {}),
    decision: params.get('decision'),
  });
  return parsed.success ? parsed.data : null;
}

/** Each rule's problems (by its index and field), as the schema or the server states them. */
export function problemsOf(rules: DraftRule[], saveError: ApiError | null): Map<string, string> {
  const problems = new Map<string, string>();
  const parsed = ApprovalRulesSchema.safeParse(rules.map(ruleOf));
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [index, field] = issue.path;
      problems.set(`${String(index)}.${String(field ?? 'kind')}`, issue.message);
    }
  }
  for (const detail of saveError?.details ?? []) {
    const found = /^body\.approvalRules\.(\d+)\.(\w+)$/u.exec(detail.path);
    if (found) problems.set(`${found[1]}.${found[2]}`, detail.message);
  }
  return problems;
}
