import { useId, useState, type FormEvent } from 'react';
import {
  APPROVAL_MESSAGE_MAX_CHARS,
  type ApprovalOption,
  type DecideApprovalBody,
} from '../../../../src-shared/approvals';
import { useNow } from '../../lib/use-now';
import { CHOICE_KEYS, choicesOf, keyOf, optionClass, optionText } from './choices';
import { timeLeft } from './time-left';

/** How long the request waits before it is rejected, counted down. */
export function TimeLeft({ expiresAt }: { expiresAt: string }) {
  const now = useNow(1000);
  return (
    <time
      className="approval-time-left"
      dateTime={expiresAt}
      title={`Rejected at ${new Date(expiresAt).toLocaleString()} unless decided`}
    >
      {timeLeft(expiresAt, now)}
    </time>
  );
}

const DIFF_START = /^--- /mu;

/**
 * The command, or each edit's whole diff, in full: a diff's added and removed lines coloured.
 * A request without a detail shows the tool's input as the agent sent it.
 */
export function ApprovalDetail({ detail, label }: { detail: string; label: string }) {
  const isDiff = DIFF_START.test(detail);
  return (
    <pre className="approval-detail" aria-label={label} tabIndex={0}>
      {isDiff
        ? detail.split('\n').map((line, i) => (
            <span key={i} className={`approval-line ${lineClass(line)}`}>
              {line}
              {'\n'}
            </span>
          ))
        : detail}
    </pre>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'approval-line-file';
  if (line.startsWith('@@')) return 'approval-line-hunk';
  if (line.startsWith('+')) return 'approval-line-add';
  if (line.startsWith('-')) return 'approval-line-del';
  return '';
}

/** What an option does, then the agent's own words for it when they differ. */
function OptionWords({ option }: { option: ApprovalOption | undefined }) {
  if (!option) return <>Reject</>;
  const { does, agentSays } = optionText(option);
  return (
    <>
      {does}
      {agentSays !== undefined && (
        <span className="approval-option-agent">
          <span className="visually-hidden">, the agent calls it </span>“{agentSays}”
        </span>
      )}
    </>
  );
}

/** Sends a decision on one request, and says how the last one went. */
export interface Decider {
  send: (body: DecideApprovalBody) => void;
  pending: boolean;
  error: Error | null;
}

/**
 * The request's own options as buttons, each worded and styled by what it does (the agent's
 * label beside), with the keys that choose them where `showKeys`; a rejection opens a box for
 * an optional message to the agent first.
 */
export function ApprovalChoices({
  requestTitle,
  options,
  decider,
  rejecting,
  onRejecting,
  showKeys,
}: {
  requestTitle: string;
  options: ApprovalOption[];
  decider: Decider;
  rejecting: boolean;
  onRejecting: (open: boolean) => void;
  showKeys: boolean;
}) {
  const [message, setMessage] = useState('');
  const inputId = useId();
  const choices = choicesOf(options);
  const rejectOptions = options.filter((o) => o.kind.startsWith('reject_'));
  const [rejectWith, setRejectWith] = useState<ApprovalOption | undefined>(choices.reject);
  const allows = options.filter((o) => o.kind.startsWith('allow_'));

  function reject(event: FormEvent) {
    event.preventDefault();
    const words = message.trim();
    decider.send({
      ...(rejectWith ? { optionId: rejectWith.id } : { decision: 'reject_once' }),
      ...(words === '' ? {} : { message: words }),
    });
  }

  const hint = (option: ApprovalOption | undefined) => {
    const key = option ? keyOf(option, choices) : CHOICE_KEYS.reject;
    return showKeys && key ? <kbd aria-hidden="true">{key}</kbd> : null;
  };
  const shortcut = (option: ApprovalOption | undefined) => {
    const key = option ? keyOf(option, choices) : CHOICE_KEYS.reject;
    return showKeys ? key : undefined;
  };

  return (
    <div className="approval-choices">
      {!rejecting ? (
        <div className="approval-buttons" role="group" aria-label={`Choices for ${requestTitle}`}>
          {allows.map((option) => (
            <button
              key={option.id}
              type="button"
              className={optionClass(option)}
              disabled={decider.pending}
              aria-keyshortcuts={shortcut(option)}
              onClick={() => decider.send({ optionId: option.id })}
            >
              <OptionWords option={option} />
              {hint(option)}
            </button>
          ))}
          {(rejectOptions.length > 0 ? rejectOptions : [undefined]).map((option) => (
            <button
              key={option?.id ?? 'reject'}
              type="button"
              className="button button-danger"
              disabled={decider.pending}
              aria-keyshortcuts={shortcut(option)}
              onClick={() => {
                setRejectWith(option);
                onRejecting(true);
              }}
            >
              <OptionWords option={option} />
              {hint(option)}
            </button>
          ))}
        </div>
      ) : (
        <form className="approval-reject" onSubmit={reject}>
          <label className="visually-hidden" htmlFor={inputId}>
            Message to the agent (optional)
          </label>
          <input
            id={inputId}
            placeholder="Message to the agent (optional): why, or what to do instead"
            value={message}
            maxLength={APPROVAL_MESSAGE_MAX_CHARS}
            onChange={(e) => setMessage(e.target.value)}
            onKeyDown={(e) => e.key === 'Escape' && onRejecting(false)}
            autoFocus
          />
          <button type="submit" className="button button-danger" disabled={decider.pending}>
            <OptionWords option={rejectWith} />
          </button>
          <button type="button" className="button" onClick={() => onRejecting(false)}>
            Cancel
          </button>
        </form>
      )}
      {decider.error && (
        <p className="form-error" role="alert">
          {decider.error.message}
        </p>
      )}
    </div>
  );
}
