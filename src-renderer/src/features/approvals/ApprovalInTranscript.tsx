import { useState } from 'react';
import type {
  ApprovalDecision,
  TranscriptApproval,
  TranscriptApprovalDecided,
} from '../../../../src-shared/approvals';
import { useDecideApproval, usePendingApprovals } from '../../api/approvals';
import { useLive } from '../../api/live';
import { NeedsYouBadge } from '../../components/Badges';
import { useWorkspace } from '../../lib/workspace';
import { ApprovalChoices, ApprovalDetail, TimeLeft } from './ApprovalParts';
import './approvals.css';

const OUTCOME: Record<ApprovalDecision, string> = {
  allow_once: 'Allowed once',
  allow_always: 'Allowed for this session',
  reject_once: 'Rejected',
  reject_always: 'Rejected',
  cancelled: 'Cancelled',
  expired: 'Expired',
};

/**
 * What the agent asked, where it asked it: the command or diff in full and, while the request
 * waits (the workspace's inbox lists it), the same choices as the Inbox; once decided, the
 * outcome, told in full by the transcript's next notice.
 */
export function ApprovalInTranscript({
  request,
  text,
  decided,
}: {
  request: TranscriptApproval;
  text: string;
  decided: TranscriptApprovalDecided | null;
}) {
  const { workspace } = useWorkspace();
  const org = workspace.organizationId;
  const pending = usePendingApprovals(org, useLive());
  const decide = useDecideApproval(org);
  const [rejecting, setRejecting] = useState(false);
  const waiting = decided ? undefined : pending.data?.approvals.find((a) => a.id === request.id);
  // A rule's decision says which rule: the transcript's next notice tells it in full.
  const outcome = !decided
    ? undefined
    : decided.decidedBy.kind === 'rule'
      ? `${OUTCOME[decided.decision]} by rule ${decided.decidedBy.index + 1}`
      : OUTCOME[decided.decision];
  return (
    <article
      className={waiting ? 'approval-card' : 'approval-card approval-decided'}
      aria-label={`Request: ${request.title}`}
    >
      <header className="approval-head">
        {waiting ? <NeedsYouBadge /> : outcome && <span className="badge">{outcome}</span>}
        <h3 className="approval-title" title={request.title}>
          {request.title}
        </h3>
        {waiting && <TimeLeft expiresAt={request.expiresAt} />}
      </header>
      <ApprovalDetail detail={request.detail ?? text} label={`What ${request.tool.name} would do`} />
      {waiting && (
        <ApprovalChoices
          requestTitle={request.title}
          options={request.options}
          decider={{
            send: (body) => {
              setRejecting(false);
              decide.mutate({ id: request.id, sessionId: waiting.sessionId, body });
            },
            pending: decide.isPending,
            error: decide.error,
          }}
          rejecting={rejecting}
          onRejecting={setRejecting}
          showKeys={false}
        />
      )}
    </article>
  );
}
