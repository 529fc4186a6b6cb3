import { CLI_NAMES, type HistoryKind, type PrStatus, type SessionStatus } from '../../../src-shared/sessions';

const STATUS_LABEL: Record<SessionStatus, string> = {
  active: 'Active',
  completed: 'Completed',
  failed: 'Failed',
};

/**
 * A session's status. One that is completed because someone stopped its run reads as
 * "Stopped", in neutral grey: it did not succeed, and did not fail either.
 */
export function StatusBadge({ status, stopped }: { status: SessionStatus; stopped?: boolean | undefined }) {
  if (status === 'completed' && stopped) {
    return (
      <span className="badge badge-stopped" title="Stopped on request before the agent finished">
        Stopped
      </span>
    );
  }
  return (
    <span className={`badge badge-${status}`}>
      {status === 'active' && <span className="pulse" aria-hidden="true" />}
      {STATUS_LABEL[status]}
    </span>
  );
}

/** A run by the demo agent: made up, not a real coding agent at work. */
export function SimulatedBadge() {
  return (
    <span className="badge badge-simulated" title="Run by the demo agent: simulated work, not a real agent">
      Simulated
    </span>
  );
}

/** A session imported from an agent CLI's own files: a conversation run in the person's terminal. */
export function ImportedBadge({ kind }: { kind: HistoryKind }) {
  return (
    <span
      className="badge badge-imported"
      title={`Imported from ${CLI_NAMES[kind]}'s own files: a conversation run in your terminal`}
    >
      {CLI_NAMES[kind]} · imported
    </span>
  );
}

/** An active session whose run waits for a place: the server runs a limited number at once. */
export function QueuedBadge() {
  return (
    <span
      className="badge badge-queued"
      title="Waiting for a place: the server runs a limited number of agents at once"
    >
      Queued
    </span>
  );
}

const PR_LABEL: Record<PrStatus, string> = {
  draft: 'Draft',
  open: 'Open',
  merged: 'Merged',
  closed: 'Closed',
};

export function PrBadge({ number, status }: { number: number; status?: PrStatus | undefined }) {
  return (
    <span
      className={`badge badge-pr-${status ?? 'open'}`}
      title={status ? `Pull request ${PR_LABEL[status].toLowerCase()}` : undefined}
    >
      #{number}
      {status ? ` ${PR_LABEL[status]}` : ''}
    </span>
  );
}

/** A session whose agent waits for someone to decide what it asked (its `needs_input` state). */
export function NeedsYouBadge() {
  return (
    <span className="badge badge-needs-you" title="The agent asks before it acts and waits for a decision">
      Needs you
    </span>
  );
}
