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
import { ruleDraftLink, ruleOffered } from './rule-offer';
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

/** After "Allow for this session": the same request allowed in every session, as a rule. */
function RuleOffer({
  approval,
  isOwner,
  onDismiss,
}: {
  approval: Approval;
  isOwner: boolean;
  onDismiss: () => void;
}) {
  const rule = ruleOffered(approval.tool);
  return (
    <section className="notice rule-offer" aria-labelledby="rule-offer-heading">
      <h2 id="rule-offer-heading" className="rule-offer-heading">
        Allowed for this session: <span className="rule-offer-title">{approval.title}</span>
      </h2>
      <p className="small">
        To allow it in every session without asking, make it a rule
        {isOwner ? '' : ' (an owner can, in Settings › Approvals)'}.
      </p>
      <div className="rule-offer-actions">
        {isOwner && (
          <Link to={ruleDraftLink(rule)} className="button button-primary">
            Add a rule: allow {rule.kind}
            {rule.pattern !== undefined && (
              <>
                {' '}
                <code className="rule-offer-pattern">{rule.pattern}</code>
              </>
            )}
          </Link>
        )}
        <button type="button" className="button" onClick={onDismiss}>
          Not now
        </button>
      </div>
    </section>
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

  /** A request just allowed for its session: it may become a rule for every session. */
  const [offer, setOffer] = useState<Approval | null>(null);
  const send = useCallback(
    (approval: Approval, body: DecideApprovalBody) => {
      setRejectingId(null);
      const kind = approval.options.find((o) => o.id === body.optionId)?.kind ?? body.decision;
      decide.mutate(
        { id: approval.id, sessionId: approval.sessionId, body },
        { onSuccess: () => setOffer(kind === 'allow_always' ? approval : null) },
      );
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
      {offer && (
        <RuleOffer approval={offer} isOwner={workspace.role === 'owner'} onDismiss={() => setOffer(null)} />
      )}
      {pending.isPending ? (
        <Loading label="Loading the requests" />
      ) : pending.isError ? (
        <ErrorState error={pending.error} onRetry={() => void pending.refetch()} />
      ) : approvals.length === 0 ? (
        <EmptyState title="Nothing waiting for you">
          <p className="muted">
            Agents ask here before they act when the workspace is set to ask (Settings ›{' '}
            <Link to="/settings/agent">Agent</Link>) or one of its rules asks (Settings ›{' '}
            <Link to="/settings/approvals">Approvals</Link>).
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
