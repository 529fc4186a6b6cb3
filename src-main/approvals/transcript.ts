import {
  approvalKindWords,
  type Approval,
  type ApprovalDecidedBy,
  type ApprovalOption,
} from '../../src-shared/approvals.js';
import { ruleWords } from '../../src-shared/approval-rules.js';
import type { AssistantMessage } from '../../src-shared/sessions.js';

/** What an option does, with the agent's words for it when they are not the same. */
function optionWords(option: ApprovalOption): string {
  const words = approvalKindWords(option.kind);
  return option.label === words ? words : `${words} (the agent's "${option.label}")`;
}

function who(by: ApprovalDecidedBy): string {
  switch (by.kind) {
    case 'user':
      return `by ${by.name}`;
    case 'apiKey':
      return `with the API key ${by.label === '' ? by.keyId : `"${by.label}"`}`;
    case 'rule':
      return `by the workspace's approval rule ${by.index + 1} (${ruleWords(by.rule)})`;
    default:
      return 'by Session Desk';
  }
}

/** A whole number of minutes, or seconds below one. */
function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60 || seconds % 60 !== 0) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = seconds / 60;
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/**
 * The request where it happened in the transcript: what the agent wants to do in full, and its
 * choices. The `approval` field carries the request itself, for a dashboard to offer the choices
 * and show the command or diff apart from the words around it.
 */
export function requestMessage(approval: Approval): AssistantMessage {
  const choices = approval.options.map(optionWords).join(' · ');
  const text = [
    `The agent asks before it acts: ${approval.title}`,
    approval.detail ?? '',
    `Choices: ${choices}`,
  ]
    .filter((part) => part.trim() !== '')
    .join('\n\n');
  const { id, title, tool, detail, options, expiresAt } = approval;
  return {
    type: 'assistant',
    notice: 'info',
    message: { content: [{ type: 'text', text }] },
    approval: { id, title, tool, ...(detail === undefined ? {} : { detail }), options, expiresAt },
  };
}

/** What became of the request, who decided it and when. */
export function decisionMessage(approval: Approval): AssistantMessage {
  const by = approval.decidedBy as ApprovalDecidedBy;
  const chosen = approval.options.find((o) => o.id === approval.optionId);
  let text: string;
  if (by.kind === 'sessiondesk') {
    const reasons: Record<typeof by.reason, string> = {
      timeout: `No one decided within ${duration(Date.parse(approval.expiresAt) - Date.parse(approval.createdAt))}: rejected.`,
      stopped: 'The run was stopped before anyone decided: the request is cancelled.',
      'follow-up': 'A follow-up prompt interrupted the run before anyone decided: the request is cancelled.',
      'server-stopped': 'Session Desk was stopped before anyone decided: the request is cancelled.',
      'server-restarted':
        'Session Desk stopped while the request waited, and its run ended with it: the request expired.',
      'run-ended': 'The run ended before anyone decided: the request is cancelled.',
      imported: 'The request was still waiting in the export this session was imported from: it expired.',
    };
    text = reasons[by.reason];
  } else {
    const what = chosen
      ? optionWords(chosen)
      : approvalKindWords(approval.decision as ApprovalOption['kind']);
    text = `${what}: decided ${who(by)}.`;
    if (approval.message !== undefined) text += `\n\nMessage to the agent: ${approval.message}`;
  }
  const { id, decision, decidedAt, decidedBy, optionId, message } = approval;
  return {
    type: 'assistant',
    notice: 'info',
    message: { content: [{ type: 'text', text }] },
    approvalDecided: {
      id,
      decision,
      decidedAt,
      decidedBy,
      ...(optionId === undefined ? {} : { optionId }),
      ...(message === undefined ? {} : { message }),
    },
  };
}
