import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { SESSION_STATUSES } from '../../../../src-shared/constants';
import type { SessionStatus, Task } from '../../../../src-shared/sessions';
import { ApiError } from '../../api/client';
import { useLive } from '../../api/live';
import { useFollowUp, useSession, useUpdateSession } from '../../api/queries';
import { Avatar } from '../../components/Avatar';
import { PrBadge, SimulatedBadge, StatusBadge } from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { ErrorState, Loading } from '../../components/States';
import { AGENT_NAMES, usageDetail, usageText } from '../../lib/usage';
import { useWorkspace } from '../../lib/workspace';
import { Transcript } from '../transcript/Transcript';

function TitleEditor({
  title,
  onSave,
  error,
  saving,
}: {
  title: string;
  onSave: (t: string) => void;
  error?: string | undefined;
  saving: boolean;
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(title);
  if (!editing) {
    return (
      <div className="title-row">
        <h1>{title}</h1>
        <button
          type="button"
          className="button button-small"
          onClick={() => {
            setDraft(title);
            setEditing(true);
          }}
        >
          Rename
        </button>
      </div>
    );
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    onSave(draft);
    setEditing(false);
  }
  return (
    <form className="title-row" onSubmit={submit}>
      <label htmlFor="title-input" className="visually-hidden">
        Title
      </label>
      <input
        id="title-input"
        className="title-input"
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && setEditing(false)}
        autoFocus
      />
      <button type="submit" className="button button-primary button-small" disabled={saving}>
        Save
      </button>
      <button type="button" className="button button-small" onClick={() => setEditing(false)}>
        Cancel
      </button>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

const TASK_MARK: Record<Task['status'], string> = { pending: '○', in_progress: '◐', completed: '●' };
const TASK_LABEL: Record<Task['status'], string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  completed: 'Done',
};

function Tasks({ tasks }: { tasks: Task[] }) {
  if (tasks.length === 0) return <p className="muted small">The agent has not planned any tasks.</p>;
  const done = tasks.filter((t) => t.status === 'completed').length;
  return (
    <>
      <p className="muted small">
        {done} of {tasks.length} done
      </p>
      <ul className="tasks" aria-label="Tasks">
        {tasks.map((task) => (
          <li key={task.id} className={`task task-${task.status}`}>
            <span aria-hidden="true" className="task-mark">
              {TASK_MARK[task.status]}
            </span>
            <span>{task.title}</span>
            <span className="visually-hidden"> ({TASK_LABEL[task.status]})</span>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The box under the transcript: a follow-up prompt, sent with the button or Ctrl/⌘+Enter. */
function FollowUp({ organizationId, sessionId }: { organizationId: string; sessionId: string }) {
  const send = useFollowUp(organizationId, sessionId);
  const [text, setText] = useState('');
  const error = send.error instanceof ApiError ? send.error : null;
  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (text.trim() === '') return;
    send.mutate(text, { onSuccess: () => setText('') });
  }
  return (
    <form className="follow-up" onSubmit={submit}>
      <label htmlFor="follow-up" className="visually-hidden">
        Follow-up prompt
      </label>
      <textarea
        id="follow-up"
        rows={3}
        placeholder="Follow up with the agent…  (Ctrl+Enter to send)"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit();
        }}
      />
      {error && (
        <p className="field-error" role="alert">
          {error.fieldError('body.content') ?? error.message}
        </p>
      )}
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={send.isPending || text.trim() === ''}
        >
          Send
        </button>
      </div>
    </form>
  );
}

export function SessionPage() {
  const { sessionId = '' } = useParams();
  const { workspace } = useWorkspace();
  const query = useSession(sessionId, useLive());
  const update = useUpdateSession(workspace.organizationId, sessionId);
  const updateError = update.error instanceof ApiError ? update.error : null;

  if (query.isPending) return <Loading label="Loading session" />;
  if (!query.data) return <ErrorState error={query.error} onRetry={() => void query.refetch()} />;
  const session = query.data.session;
  const { metadata } = session;

  return (
    <div className="page session-page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/">Sessions</Link>
      </nav>
      <TitleEditor
        key={session.title}
        title={session.title}
        saving={update.isPending}
        error={updateError?.fieldError('body.title') ?? updateError?.message}
        onSave={(title) => update.mutate({ title })}
      />
      <div className="session-head">
        <StatusBadge status={session.status} />
        <label htmlFor="status-select" className="muted">
          Status
        </label>
        <select
          id="status-select"
          value={session.status}
          disabled={update.isPending}
          onChange={(e) => update.mutate({ status: e.target.value as SessionStatus })}
        >
          {SESSION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s[0]?.toUpperCase()}
              {s.slice(1)}
            </option>
          ))}
        </select>
        <span className="session-author">
          <Avatar name={session.author.name} imageUrl={session.author.imageUrl} size={20} />
          {session.author.name}
        </span>
        <span className="muted">
          started <RelativeTime iso={session.createdAt} />
        </span>
      </div>
      <div className="session-columns">
        <section className="session-transcript" aria-label="Conversation">
          <Transcript messages={session.messages} />
          {session.status === 'active' && session.messages.at(-1)?.type !== 'result' && (
            <p className="working muted" role="status">
              <span className="spinner" aria-hidden="true" /> The agent is working…
            </p>
          )}
          <FollowUp organizationId={workspace.organizationId} sessionId={session.id} />
        </section>
        <aside className="session-side">
          <section aria-labelledby="details-heading">
            <h2 id="details-heading">Details</h2>
            <dl className="details">
              <dt>Repository</dt>
              <dd>{metadata.repository ?? <span className="muted">none</span>}</dd>
              {metadata.branch && (
                <>
                  <dt>Branch</dt>
                  <dd>
                    <code>{metadata.branch}</code>
                  </dd>
                </>
              )}
              {metadata.prNumber !== undefined && (
                <>
                  <dt>Pull request</dt>
                  <dd>
                    {metadata.prUrl ? (
                      <a href={metadata.prUrl} target="_blank" rel="noreferrer noopener">
                        <PrBadge number={metadata.prNumber} status={metadata.prStatus} />
                      </a>
                    ) : (
                      <PrBadge number={metadata.prNumber} status={metadata.prStatus} />
                    )}
                  </dd>
                </>
              )}
              {session.agent !== undefined && (
                <>
                  <dt>Agent</dt>
                  <dd>{session.agent === 'demo' ? <SimulatedBadge /> : AGENT_NAMES[session.agent]}</dd>
                </>
              )}
              <dt>Model</dt>
              <dd>
                <code>{session.model}</code>
              </dd>
              {session.usage !== undefined && (
                <>
                  <dt>Usage</dt>
                  <dd title={usageDetail(session.usage)}>{usageText(session.usage)}</dd>
                </>
              )}
              <dt>Updated</dt>
              <dd>
                <RelativeTime iso={session.updatedAt} />
              </dd>
            </dl>
          </section>
          <section aria-labelledby="tasks-heading">
            <h2 id="tasks-heading">Tasks</h2>
            <Tasks tasks={session.tasks} />
          </section>
        </aside>
      </div>
    </div>
  );
}
