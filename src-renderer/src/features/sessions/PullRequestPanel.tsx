import { useEffect, useState } from 'react';
import type { SessionSummary } from '../../../../src-shared/sessions';
import { useGhStatus, useOpenPullRequest, useRefreshPullRequest } from '../../api/pull-requests';
import { RelativeTime } from '../../components/RelativeTime';
import { inlineCodeParts } from '../../lib/inline-code';

/** A session's pull request is read from GitHub on opening its page, at most this often. */
const AUTO_REFRESH_EVERY_MS = 60_000;
const lastAutoRefresh = new Map<string, number>();

/** Whether a pull request can still change on GitHub, so that its status is worth reading. */
const mayChange = (status: string | undefined) => status === 'open' || status === 'draft';

/** gh's and git's messages keep their lines; commands in backticks show as code. */
function ToolMessage({ text }: { text: string }) {
  return (
    <>{inlineCodeParts(text).map((part, i) => (part.code ? <code key={i}>{part.text}</code> : part.text))}</>
  );
}

function ErrorNote({ error }: { error: Error | null }) {
  if (!error) return null;
  return (
    <p className="field-error pull-request-error" role="alert">
      <ToolMessage text={error.message} />
    </p>
  );
}

/**
 * The demo's pull-request step, simulated: the demo has no code host, so nothing is pushed and
 * none is opened. A sample session's made-up pull request is shown, marked so, with no link.
 */
function SimulatedPullRequest({ session }: { session: SessionSummary }) {
  const { metadata } = session;
  return (
    <section aria-labelledby="pull-request-heading" className="pull-request-panel">
      <h2 id="pull-request-heading">Pull request</h2>
      {metadata.prNumber !== undefined ? (
        <p className="pull-request-line">
          <span>#{metadata.prNumber}</span>
          <span className="muted small">{metadata.prStatus ?? 'open'} · simulated</span>
        </p>
      ) : null}
      <p className="muted small">
        Simulated: the demo has no code host, so no pull request is opened
        {metadata.prNumber === undefined && metadata.branch ? (
          <>
            . Its work is on <code>{metadata.branch}</code> in the session&apos;s folder: see Changes.
          </>
        ) : (
          '.'
        )}
      </p>
    </section>
  );
}

/**
 * The session's pull request: a button that pushes the agent's branch and opens one with the
 * GitHub CLI, and once there is one, its status, refreshed from GitHub. The demo's is simulated
 * (SimulatedPullRequest).
 */
export function PullRequestPanel({
  session,
  organizationId,
}: {
  session: SessionSummary;
  organizationId: string;
}) {
  const { metadata } = session;
  const open = useOpenPullRequest(organizationId, session.id);
  const refresh = useRefreshPullRequest(organizationId, session.id);
  const [draft, setDraft] = useState(false);
  const realAgent = session.agent !== undefined && session.agent !== 'demo';
  const onGitHub = metadata.prUrl?.startsWith('https://github.com/') === true;
  const canRefresh = realAgent && onGitHub && metadata.prNumber !== undefined;
  const gh = useGhStatus(realAgent && metadata.repository !== undefined);
  const ghMissing =
    gh.data?.available === false ? (gh.data.problem ?? 'The GitHub CLI was not found.') : null;
  const refreshNow = refresh.mutate;

  useEffect(() => {
    if (!canRefresh || !mayChange(metadata.prStatus)) return;
    const last = lastAutoRefresh.get(session.id) ?? 0;
    if (Date.now() - last < AUTO_REFRESH_EVERY_MS) return;
    lastAutoRefresh.set(session.id, Date.now());
    refreshNow();
  }, [canRefresh, metadata.prStatus, session.id, refreshNow]);

  // The demo agent always has a branch (in its sample project), with a repository or without.
  if (metadata.repository === undefined && session.agent !== 'demo') return null;
  if (session.agent === 'demo') return <SimulatedPullRequest session={session} />;
  const mergedAt = refresh.data?.pullRequest.mergedAt ?? open.data?.pullRequest.mergedAt;

  return (
    <section aria-labelledby="pull-request-heading" className="pull-request-panel">
      <h2 id="pull-request-heading">Pull request</h2>
      {metadata.prNumber !== undefined ? (
        <div className="stack-tight">
          <p className="pull-request-line">
            {metadata.prUrl ? (
              <a href={metadata.prUrl} target="_blank" rel="noreferrer noopener">
                #{metadata.prNumber} on {onGitHub ? 'GitHub' : new URL(metadata.prUrl).host}
              </a>
            ) : (
              <span>#{metadata.prNumber}</span>
            )}
            <span className="muted small">
              {metadata.prStatus === 'merged' && mergedAt ? (
                <>
                  merged <RelativeTime iso={mergedAt} />
                </>
              ) : (
                (metadata.prStatus ?? 'open')
              )}
            </span>
          </p>
          {canRefresh && ghMissing && (
            <p className="field-hint pull-request-error">
              <ToolMessage text={ghMissing} />
            </p>
          )}
          {canRefresh && !ghMissing && (
            <button
              type="button"
              className="button button-small"
              disabled={refresh.isPending}
              onClick={() => refresh.mutate()}
            >
              {refresh.isPending ? 'Checking GitHub…' : 'Refresh status'}
            </button>
          )}
          <ErrorNote error={refresh.error} />
        </div>
      ) : !realAgent ? (
        <p className="muted small">No pull request recorded.</p>
      ) : (
        <div className="stack-tight">
          <p className="muted small">
            Pushes <code>{metadata.branch ?? 'the branch'}</code> to {metadata.repository} and opens a pull
            request with the GitHub CLI, as you.
          </p>
          {ghMissing && (
            <p className="field-error pull-request-error" role="status">
              <ToolMessage text={ghMissing} />
            </p>
          )}
          <label className="checkbox small">
            <input type="checkbox" checked={draft} onChange={(e) => setDraft(e.target.checked)} /> As a draft
          </label>
          <button
            type="button"
            className="button button-primary button-small"
            disabled={open.isPending || session.status === 'active' || ghMissing !== null}
            onClick={() => open.mutate({ draft })}
          >
            {open.isPending ? 'Opening…' : 'Open pull request'}
          </button>
          {session.status === 'active' && !open.isPending && (
            <p className="field-hint">Available once the agent has finished.</p>
          )}
          <ErrorNote error={open.error} />
        </div>
      )}
    </section>
  );
}
