import { useState } from 'react';
import { CLI_NAMES, type SessionSource } from '../../../../src-shared/sessions';
import { useStopSession, useUpdateSession } from '../../api/queries';
import { ConfirmDialog } from '../../components/ConfirmDialog';

/** Stops the agent after asking: the run's work so far stays, but it cannot be resumed as is. */
export function StopButton({ organizationId, sessionId }: { organizationId: string; sessionId: string }) {
  const stop = useStopSession(organizationId, sessionId);
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button
        type="button"
        className="button button-small button-danger"
        disabled={stop.isPending}
        onClick={() => setAsking(true)}
      >
        {stop.isPending ? 'Stopping…' : 'Stop'}
      </button>
      {stop.error && (
        <span className="field-error" role="alert">
          {stop.error.message}
        </span>
      )}
      <ConfirmDialog
        open={asking}
        title="Stop this session?"
        body="The agent stops where it is and the session shows as Stopped (its status is completed). What it did so far stays; a follow-up starts it again."
        confirmLabel="Stop the agent"
        onCancel={() => setAsking(false)}
        onConfirm={() => {
          setAsking(false);
          stop.mutate();
        }}
      />
    </>
  );
}

/**
 * An imported session going on in the person's terminal: nothing here can stop that terminal,
 * so none is offered. Marking it finished changes only its status here; the transcript stays
 * the CLI's own, and the terminal's next line makes it active again.
 */
export function MarkFinishedButton({
  organizationId,
  sessionId,
  source,
}: {
  organizationId: string;
  sessionId: string;
  source: SessionSource;
}) {
  const update = useUpdateSession(organizationId, sessionId);
  return (
    <>
      <button
        type="button"
        className="button button-small"
        disabled={update.isPending}
        title={`Session Desk cannot stop ${CLI_NAMES[source.kind]} in your terminal: this only shows the session as finished here.`}
        onClick={() => update.mutate({ status: 'completed' })}
      >
        Mark as finished
      </button>
      {update.error && (
        <span className="field-error" role="alert">
          {update.error.message}
        </span>
      )}
    </>
  );
}
