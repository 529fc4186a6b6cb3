import { approvalKindWords, type ApprovalOption } from '../../../../src-shared/approvals';

/**
 * The keys that choose, where the request offers the choice: `a` allows once, `s` allows for
 * the session, `r` rejects (after an optional message). Reject is always possible: with no
 * option of its own, the decision is sent by kind.
 */
export const CHOICE_KEYS = { allowOnce: 'a', allowSession: 's', reject: 'r' } as const;

export interface Choices {
  allowOnce: ApprovalOption | undefined;
  allowSession: ApprovalOption | undefined;
  /** The first rejecting option, or undefined to reject by kind (`reject_once`). */
  reject: ApprovalOption | undefined;
}

export function choicesOf(options: ApprovalOption[]): Choices {
  return {
    allowOnce: options.find((o) => o.kind === 'allow_once'),
    allowSession: options.find((o) => o.kind === 'allow_always'),
    reject: options.find((o) => o.kind === 'reject_once') ?? options.find((o) => o.kind === 'reject_always'),
  };
}

/** The key that chooses an option, if one does. */
export function keyOf(option: ApprovalOption, choices: Choices): string | undefined {
  if (option === choices.allowOnce) return CHOICE_KEYS.allowOnce;
  if (option === choices.allowSession) return CHOICE_KEYS.allowSession;
  if (option === choices.reject) return CHOICE_KEYS.reject;
  return undefined;
}

/**
 * What a button says of an option: Session Desk's words for what it does (its kind), and the
 * agent's own label beside them when it says something else. An agent may label an allow
 * "Reject": the button still says, and looks like, what it does.
 */
export function optionText(option: ApprovalOption): { does: string; agentSays?: string } {
  const does = approvalKindWords(option.kind);
  return option.label === does ? { does } : { does, agentSays: option.label };
}

/** The button's look follows what the option does: allowing once is the first choice, rejecting a danger. */
export function optionClass(option: ApprovalOption): string {
  if (option.kind === 'allow_once') return 'button button-primary';
  return option.kind.startsWith('reject_') ? 'button button-danger' : 'button';
}
