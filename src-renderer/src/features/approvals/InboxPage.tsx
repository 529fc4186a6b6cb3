import { useCallback, useState } from 'react';
import { Link } from 'react-router';
import type { Approval, DecideApprovalBody } from '../../../../src-shared/approvals';
import { useDecideApproval, usePendingApprovals } from '../../api/approvals';
import { useLive } from '../../api/live';
import { useSessionSummary } from '../../api/session-summary';
import { NeedsYouBadge } from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { displayTitle } from '../../lib/plain-text';
import { INBOX_MOVE_KEYS } from '../../lib/shortcuts';
import { useShortcuts } from '../../lib/use-shortcut';
import { useAgentKinds } from '../../api/queries';
import { requestingAgentName } from '../../lib/agent-names';
import { useWorkspace } from '../../lib/workspace';
import { ApprovalChoices, ApprovalDetail, TimeLeft, type Decider } from './ApprovalParts';
import { CHOICE_KEYS, choicesOf } from './choices';
import './approvals.css';

/** The session a request belongs to, by its title, linked. */
function SessionLink({ sessionId }: { sessionId: string }) {
  const summary = useSessionSummary(sessionId, useLive());
  const session = summary.data?.session;
  return (
    <Link to={`/sessions/${sessionId}`} className="approval-session">
      {session ? displayTitle(session.title, session.firstMessagePreview) : sessionId}
    </Link>
  );
}

function InboxItem({
  approval,
  selected,
  onSelect,
  decider,
  rejecting,
  onRejecting,
}: {
  approval: Approval;
  selected: boolean;
  onSelect: () => void;
  decider: Decider;
  rejecting: boolean;
  onRejecting: (open: boolean) => void;
}) {
  const titleId = `approval-${approval.id}-title`;
  const kinds = useAgentKinds(approval.agent.startsWith('acp:')).data?.agents;
  return (
    <article
      className={selected ? 'approval-card approval-card-selected' : 'approval-card'}
      aria-labelledby={titleId}
      aria-current={selected ? 'true' : undefined}
      onFocus={onSelect}
      onClick={onSelect}
    >
      <header className="approval-head">
        <NeedsYouBadge />
        <h2 id={titleId} className="approval-title" title={approval.title}>
          {approval.title}
        </h2>
        <TimeLeft expiresAt={approval.expiresAt} />
      </header>
      <p className="approval-meta muted small">
        <span>{requestingAgentName(approval.agent, kinds)}</span>
        <span aria-hidden="true"> · </span>
        <SessionLink sessionId={approval.sessionId} />
        <span aria-hidden="true"> · </span>
        <span>
          asked <RelativeTime iso={approval.createdAt} />
        </span>
        <span aria-hidden="true"> · </span>
        <code>{approval.tool.name}</code>
      </p>
      <ApprovalDetail
        detail={approval.detail ?? JSON.stringify(approval.tool.input, null, 2)}
        label={`What ${approval.tool.name} would do`}
      />
      <ApprovalChoices
        requestTitle={approval.title}
        options={approval.options}
        decider={decider}
        rejecting={rejecting}
        onRejecting={onRejecting}
        showKeys={selected}
      />
    </article>
  );
}

/**
 * Every request of the workspace waiting for a decision, oldest first, across its sessions and
 * agents. The keys act on the selected request: j and k move, a allows once, s allows for the
 * session, r rejects (Enter sends it, with the message typed or none; Escape goes back).
 */
export function InboxPage() {
  const { workspace } = useWorkspace();
  const org = workspace.organizationId;
  const pending = usePendingApprovals(org, useLive());
  const decide = useDecideApproval(org);
  const approvals = pending.data?.approvals ?? [];
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [rejectingId, setRejectingId] = useState<string | null>(null);
  // The selected request stays selected while it waits; once it is gone, the one now in its place.
  const [lastIndex, setLastIndex] = useState(0);
  const foundAt = approvals.findIndex((a) => a.id === selectedId);
  const index = foundAt >= 0 ? foundAt : Math.min(lastIndex, approvals.length - 1);
  if (foundAt < 0 && index >= 0 && approvals[index]) setSelectedId(approvals[index].id);
  if (foundAt >= 0 && foundAt !== lastIndex) setLastIndex(foundAt);
  const selected = index >= 0 ? approvals[index] : undefined;

  const send = useCallback(
    (approval: Approval, body: DecideApprovalBody) => {
      setRejectingId(null);
      decide.mutate({ id: approval.id, sessionId: approval.sessionId, body });
    },
    [decide],
  );
  const deciderOf = (approval: Approval): Decider => {
    const mine = decide.variables?.id === approval.id;
    return {
      send: (body) => send(approval, body),
      pending: mine && decide.isPending,
      error: mine ? decide.error : null,
    };
  };

  const move = (step: number) => {
    const next = approvals[Math.max(0, Math.min(approvals.length - 1, index + step))];
    if (next) setSelectedId(next.id);
  };
  const choose = (key: string) => {
    // Only the selected request's own decision on its way holds its keys back: the one just
    // allowed may still be answering when the next one is chosen.
    if (!selected || (decide.isPending && decide.variables?.id === selected.id)) return;
    const choices = choicesOf(selected.options);
    if (key === CHOICE_KEYS.reject) {
      setRejectingId(selected.id);
      return;
    }
    const option = key === CHOICE_KEYS.allowOnce ? choices.allowOnce : choices.allowSession;
    if (option) send(selected, { optionId: option.id });
  };
  useShortcuts({
    [INBOX_MOVE_KEYS.next]: () => move(1),
    [INBOX_MOVE_KEYS.previous]: () => move(-1),
    [CHOICE_KEYS.allowOnce]: () => choose(CHOICE_KEYS.allowOnce),
    [CHOICE_KEYS.allowSession]: () => choose(CHOICE_KEYS.allowSession),
    [CHOICE_KEYS.reject]: () => choose(CHOICE_KEYS.reject),
  });

  return (
    <div className="page inbox-page">
      <header className="page-header">
        <h1>Inbox</h1>
        {approvals.length > 0 && (
          <span className="muted" role="status">
            {approvals.length} waiting
          </span>
        )}
      </header>
      <p className="muted">
        What agents ask before they act in {workspace.name}, oldest first.{' '}
        <Link to="/settings/notifications">Get notified</Link> when one arrives.
      </p>
      <p className="inbox-keys muted small">
        <span>
          <kbd>j</kbd> <kbd>k</kbd> next, previous
        </span>
        <span>
          <kbd>{CHOICE_KEYS.allowOnce}</kbd> allow once
        </span>
        <span>
          <kbd>{CHOICE_KEYS.allowSession}</kbd> allow for this session
        </span>
        <span>
          <kbd>{CHOICE_KEYS.reject}</kbd> reject (Enter sends, Escape goes back)
        </span>
      </p>
      {pending.isPending ? (
        <Loading label="Loading the requests" />
      ) : pending.isError ? (
        <ErrorState error={pending.error} onRetry={() => void pending.refetch()} />
      ) : approvals.length === 0 ? (
        <EmptyState title="Nothing waiting for you">
          <p className="muted">
            Agents ask here before they act when the workspace is set to ask (Settings ›{' '}
            <Link to="/settings/agent">Agent</Link>).
          </p>
        </EmptyState>
      ) : (
        <ol className="inbox-list" aria-label="Requests">
          {approvals.map((approval) => (
            <li key={approval.id}>
              <InboxItem
                approval={approval}
                selected={approval.id === selected?.id}
                onSelect={() => setSelectedId(approval.id)}
                decider={deciderOf(approval)}
                rejecting={rejectingId === approval.id}
                onRejecting={(open) => setRejectingId(open ? approval.id : null)}
              />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
