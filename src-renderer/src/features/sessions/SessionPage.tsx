import { useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { SESSION_STATUSES } from '../../../../src-shared/constants';
import { CLI_NAMES, type SessionStatus, type Task } from '../../../../src-shared/sessions';
import { ApiError } from '../../api/client';
import { useLive } from '../../api/live';
import { useUpdateSession } from '../../api/queries';
import { useSessionSummary } from '../../api/session-summary';
import { Avatar } from '../../components/Avatar';
import { NeedsYouBadge, PrBadge, QueuedBadge, SimulatedBadge, StatusBadge } from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { useNow } from '../../lib/use-now';
import { displayTitle } from '../../lib/plain-text';
import { usePageTitle } from '../../lib/use-page-title';
import { useAgentNames } from '../../lib/agent-names';
import { usageDetail, usageText } from '../../lib/usage';
import { useWorkspace } from '../../lib/workspace';
import { Transcript } from '../transcript/Transcript';
import { ChangesView } from '../changes/ChangesView';
import { doneSummary, shownStatus, TASK_LABEL, TASK_MARK } from '../../lib/tasks';
import { useTranscriptPages } from '../transcript/use-transcript-pages';
import { FollowUp } from './FollowUp';
import { ImportedDetails, ImportedFrom, PushedFromLine } from './ImportedOrigin';
import { PullRequestPanel } from './PullRequestPanel';
import { MarkFinishedButton, StopButton } from './StopControls';

/**
 * The title, renamed in place. The editor stays open until the server has taken the new
 * title, so that its refusal (a blank title, one too long) shows where it was typed.
 */
function TitleEditor({
  title,
  shownTitle,
  onEdit,
  onSave,
  error,
  saving,
}: {
  title: string;
  shownTitle: string;
  onEdit: () => void;
  onSave: (t: string, saved: () => void) => void;
  error?: string | undefined;
  saving: boolean;
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(title);
  if (!editing) {
    return (
      <div className="title-row">
        <h1>{shownTitle}</h1>
        <button
          type="button"
          className="button button-small"
          onClick={() => {
            onEdit();
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
    onSave(draft, () => setEditing(false));
  }
  return (
    <form className="title-row" onSubmit={submit}>
      <label htmlFor="title-input" className="visually-hidden">
        Title
      </label>
      <input
        id="title-input"
        className="title-input"
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'title-error' : undefined}
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
        <p id="title-error" className="field-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/**
 * The agent's checklist. Once its run is over, tasks it left pending or in progress are
 * shown as not done: nobody is working on them any more.
 */
function Tasks({ tasks, runOver }: { tasks: Task[]; runOver: boolean }) {
  if (tasks.length === 0) return <p className="muted small">The agent has not planned any tasks.</p>;
  return (
    <>
      <p className="muted small">
        {doneSummary(
          tasks.map((t) => t.status),
          runOver,
        )}
      </p>
      <ul className="tasks" aria-label="Tasks">
        {tasks.map((task) => {
          const status = shownStatus(task.status, runOver);
          return (
            <li key={task.id} className={`task task-${status}`}>
              <span aria-hidden="true" className="task-mark">
                {TASK_MARK[status]}
              </span>
              <span>{task.title}</span>
              <span className="visually-hidden"> ({TASK_LABEL[status]})</span>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** The status control's value for a session completed because someone stopped its run. */
const STOPPED = 'stopped';

/** An agent silent for this long is probably not working any more; the note says so. */
const QUIET_AFTER_MS = 30 * 60 * 1000;

export function SessionPage() {
  const { sessionId = '' } = useParams();
  const { workspace } = useWorkspace();
  const query = useSessionSummary(sessionId, useLive());
  // `?message=N&q=…` (a search hit) opens the transcript at that message, outlined, unfolded,
  // with the search's terms marked.
  const [searchParams] = useSearchParams();
  const messageParam = searchParams.get('message');
  const focusMessage =
    messageParam !== null && /^\d{1,9}$/u.test(messageParam) ? Number(messageParam) : undefined;
  const pages = useTranscriptPages(sessionId, query.data?.session.messageCount, focusMessage);
  const now = useNow();
  const update = useUpdateSession(workspace.organizationId, sessionId);
  const updateError = update.error instanceof ApiError ? update.error : null;
  // An ACP agent is named as it is ("OpenCode"), from the server's list of agents.
  const agentName = useAgentNames(query.data?.session.agent === 'acp');
  usePageTitle(
    query.data ? displayTitle(query.data.session.title, query.data.session.firstMessagePreview) : undefined,
  );

  if (query.isPending) return <Loading label="Loading session" />;
  if (!query.data) {
    const status = query.error instanceof ApiError ? query.error.status : 0;
    if (status === 404 || status === 403) {
      return (
        <EmptyState title={status === 404 ? 'Session not found' : 'Not in this workspace'}>
          <p>
            {status === 404
              ? 'There is no session at this address: it may have been mistyped, or its data folder is another one.'
              : 'This session belongs to a workspace you are not a member of.'}
          </p>
          <Link to="/" className="button button-primary">
            Back to sessions
          </Link>
        </EmptyState>
      );
    }
    return <ErrorState error={query.error} onRetry={() => void query.refetch()} />;
  }
  const session = query.data.session;
  const { metadata } = session;
  const active = session.status === 'active';
  const runOver = !active || pages.messages.at(-1)?.type === 'result';
  const firstPrompt = session.firstMessagePreview;
  const quiet = now.getTime() - Date.parse(session.updatedAt) > QUIET_AFTER_MS;
  // An imported session no run of ours works on: its CLI goes on in the person's terminal.
  const following = session.source && session.agentState === undefined ? session.source : undefined;

  return (
    <div className="page session-page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/">Sessions</Link>
      </nav>
      <TitleEditor
        key={session.title}
        title={session.title}
        shownTitle={displayTitle(session.title, firstPrompt)}
        saving={update.isPending}
        error={updateError?.fieldError('body.title') ?? updateError?.message}
        onEdit={() => update.reset()}
        onSave={(title, saved) => update.mutate({ title }, { onSuccess: saved })}
      />
      {session.source && <ImportedFrom source={session.source} />}
      {session.pushedFrom && <PushedFromLine pushedFrom={session.pushedFrom} />}
      <div className="session-head">
        <StatusBadge status={session.status} stopped={session.stopped} />
        {session.agentState === 'queued' && <QueuedBadge />}
        {session.agentState === 'needs_input' && <NeedsYouBadge />}
        {active && following ? (
          <>
            <MarkFinishedButton
              organizationId={workspace.organizationId}
              sessionId={session.id}
              source={following}
            />
            <span className="muted small">
              Going on in {CLI_NAMES[following.kind]} in your terminal: Session Desk cannot stop it there.
            </span>
          </>
        ) : active ? (
          <StopButton organizationId={workspace.organizationId} sessionId={session.id} />
        ) : (
          <>
            <label htmlFor="status-select" className="muted">
              Mark as
            </label>
            {/* A stopped session is neither: it reads as Stopped until someone marks it. */}
            <select
              id="status-select"
              value={session.stopped ? STOPPED : session.status}
              disabled={update.isPending}
              onChange={(e) => {
                if (e.target.value !== STOPPED) update.mutate({ status: e.target.value as SessionStatus });
              }}
            >
              {session.stopped && <option value={STOPPED}>Stopped</option>}
              {SESSION_STATUSES.filter((s) => s !== 'active').map((s) => (
                <option key={s} value={s}>
                  {s[0]?.toUpperCase()}
                  {s.slice(1)}
                </option>
              ))}
            </select>
          </>
        )}
        <span className="session-author">
          <Avatar name={session.author.name} imageUrl={session.author.imageUrl} size={20} />
          {session.author.name}
        </span>
        <span className="muted">
          started <RelativeTime iso={session.createdAt} />
        </span>
      </div>
      <ChangesView
        sessionId={session.id}
        organizationId={workspace.organizationId}
        updatedAt={session.updatedAt}
      />
      <div className="session-columns">
        <section className="session-transcript" aria-label="Conversation">
          <Transcript
            pages={pages}
            active={active}
            focusMessage={focusMessage}
            focusTerms={searchParams.get('q') ?? undefined}
          />
          {!runOver &&
            (following ? (
              <p className="working muted" role="status">
                {CLI_NAMES[following.kind]} is at it in your terminal: what it writes shows here.
              </p>
            ) : session.agentState === undefined ? (
              // Active with no run going or waiting (a demo session paused for its person, say).
              <p className="working muted" role="status">
                No agent is working on this session now. Send a follow-up to carry on, or stop it.
              </p>
            ) : session.agentState === 'needs_input' ? (
              <p className="working muted" role="status">
                <span>
                  The agent asks before it acts and waits for you: decide above, or in the{' '}
                  <Link to="/inbox">Inbox</Link>.
                </span>
              </p>
            ) : session.agentState === 'queued' ? (
              <p className="working muted" role="status">
                Waiting for a place: the agent starts when another run ends.
              </p>
            ) : quiet ? (
              <p className="working muted" role="status">
                Nothing new from the agent since <RelativeTime iso={session.updatedAt} />. Stop it, or send a
                follow-up.
              </p>
            ) : (
              <p className="working muted" role="status">
                <span className="spinner" aria-hidden="true" /> The agent is working…
              </p>
            ))}
          <FollowUp
            organizationId={workspace.organizationId}
            sessionId={session.id}
            source={session.source}
            updatedAt={session.updatedAt}
          />
        </section>
        <aside className="session-side">
          <section aria-labelledby="details-heading">
            <h2 id="details-heading">Details</h2>
            <dl className="details">
              <dt>Repository</dt>
              <dd>
                {metadata.repository ??
                  (session.agent === 'demo' ? (
                    <span className="muted">none: the demo agent works in its sample project</span>
                  ) : (
                    <span className="muted">none</span>
                  ))}
              </dd>
              {metadata.branch && (
                <>
                  <dt>Branch</dt>
                  <dd>
                    <code>{metadata.branch}</code>
                  </dd>
                </>
              )}
              {session.source && <ImportedDetails source={session.source} />}
              {metadata.prNumber !== undefined && (
                <>
                  <dt>Pull request</dt>
                  <dd>
                    {/* The demo's pull requests are made up: no link to a code host that never had them. */}
                    {metadata.prUrl && session.agent !== 'demo' ? (
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
                  <dd>
                    {session.agent === 'demo' ? (
                      <SimulatedBadge />
                    ) : (
                      agentName(session.agent, session.acpAgent)
                    )}
                  </dd>
                </>
              )}
              {session.isolation !== undefined && (
                <>
                  <dt>Sandbox</dt>
                  <dd>
                    {session.isolation === 'sandbox' ? (
                      'Operating-system sandbox'
                    ) : (
                      <span
                        className="notice-text"
                        title="No sandbox was available: the agent ran as your user."
                      >
                        None: ran as your user
                      </span>
                    )}
                  </dd>
                </>
              )}
              <dt>Model</dt>
              <dd>
                {session.agent === 'demo' ? (
                  // The demo agent runs no model, whatever name the session records.
                  <span className="muted">none: simulated</span>
                ) : session.model ? (
                  <code>{session.model}</code>
                ) : (
                  // None was chosen: the agent ran its own default, which Session Desk does not know.
                  <span className="muted">
                    {session.agent && session.agent !== 'command'
                      ? `${agentName(session.agent, session.acpAgent)}'s own default`
                      : "The agent's own default"}
                  </span>
                )}
              </dd>
              {session.usage !== undefined && (
                <>
                  <dt>Usage</dt>
                  {session.agent === 'demo' ? (
                    <dd
                      className="muted"
                      title="The demo agent runs no model: its tokens and cost are made up."
                    >
                      simulated: no tokens, nothing paid
                    </dd>
                  ) : (
                    <dd title={usageDetail(session.usage)}>{usageText(session.usage)}</dd>
                  )}
                </>
              )}
              <dt>Updated</dt>
              <dd>
                <RelativeTime iso={session.updatedAt} />
              </dd>
            </dl>
          </section>
          <PullRequestPanel session={session} organizationId={workspace.organizationId} />
          <section aria-labelledby="tasks-heading">
            <h2 id="tasks-heading">Tasks</h2>
            <Tasks tasks={session.tasks} runOver={runOver} />
          </section>
        </aside>
      </div>
    </div>
  );
}
