import { useCallback, useMemo, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { SESSION_STATUSES } from '../../../../src-shared/constants';
import type { SessionSummary } from '../../../../src-shared/sessions';
import { useLive } from '../../api/live';
import { useMembers, useSessionsPage, type SessionFilters } from '../../api/queries';
import { Avatar } from '../../components/Avatar';
import { PrBadge, SimulatedBadge, StatusBadge } from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { useShortcut } from '../../lib/use-shortcut';
import { useWorkspace } from '../../lib/workspace';
import { StatsCards } from './StatsCards';

function SessionRow({ session }: { session: SessionSummary }) {
  const { metadata } = session;
  return (
    <li>
      <Link to={`/sessions/${session.id}`} className="session-row">
        <div className="session-main">
          <div className="session-title-line">
            <span className="session-title">{session.title}</span>
            <StatusBadge status={session.status} />
            {session.agent === 'demo' && <SimulatedBadge />}
            {metadata.prNumber !== undefined && (
              <PrBadge number={metadata.prNumber} status={metadata.prStatus} />
            )}
          </div>
          {session.lastMessagePreview && <p className="session-preview">{session.lastMessagePreview}</p>}
        </div>
        <div className="session-meta">
          <span className="session-author">
            <Avatar name={session.author.name} imageUrl={session.author.imageUrl} size={20} />
            <span>{session.author.name}</span>
          </span>
          {metadata.repository && (
            <span className="session-repo" title="Repository and branch">
              {metadata.repository}
              {metadata.branch ? ` · ${metadata.branch}` : ''}
            </span>
          )}
          <span className="muted" title="Messages">
            {session.messageCount} {session.messageCount === 1 ? 'message' : 'messages'}
          </span>
          <span className="muted">
            <RelativeTime iso={session.updatedAt} />
          </span>
        </div>
      </Link>
    </li>
  );
}

export function SessionsPage() {
  const { workspace } = useWorkspace();
  const org = workspace.organizationId;
  const [filters, setFilters] = useState<SessionFilters>({});
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useSessionsPage(org, filters, cursor, useLive());
  const members = useMembers(org);
  const searchRef = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  useShortcut(
    '/',
    useCallback(() => searchRef.current?.focus(), []),
  );
  useShortcut(
    'n',
    useCallback(() => void navigate('/new'), [navigate]),
  );

  const setFilter = (change: SessionFilters) => {
    setFilters((current) => ({ ...current, ...change }));
    setCursors([undefined]);
  };
  const repositories = useMemo(
    () =>
      [
        ...new Set(
          (page.data?.sessions ?? []).flatMap((s) => (s.metadata.repository ? [s.metadata.repository] : [])),
        ),
      ].sort(),
    [page.data],
  );
  const filtered = Object.values(filters).some(Boolean);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Sessions</h1>
        <Link to="/new" className="button button-primary">
          New session <kbd>n</kbd>
        </Link>
      </header>
      <StatsCards stats={page.data?.stats} />
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ q: search.trim() || undefined });
        }}
      >
        <label className="visually-hidden" htmlFor="search">
          Search titles and prompts
        </label>
        <input
          id="search"
          ref={searchRef}
          type="search"
          placeholder="Search titles and prompts  ( / )"
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            if (e.target.value === '') setFilter({ q: undefined });
          }}
        />
        <label className="visually-hidden" htmlFor="filter-status">
          Status
        </label>
        <select
          id="filter-status"
          value={filters.status ?? ''}
          onChange={(e) => setFilter({ status: (e.target.value || undefined) as SessionFilters['status'] })}
        >
          <option value="">All statuses</option>
          {SESSION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s[0]?.toUpperCase()}
              {s.slice(1)}
            </option>
          ))}
        </select>
        <label className="visually-hidden" htmlFor="filter-author">
          Author
        </label>
        <select
          id="filter-author"
          value={filters.authorId ?? ''}
          onChange={(e) => setFilter({ authorId: e.target.value || undefined })}
        >
          <option value="">All authors</option>
          {(members.data?.members ?? []).map((m) => (
            <option key={m.userId} value={m.userId}>
              {m.name}
            </option>
          ))}
        </select>
        <label className="visually-hidden" htmlFor="filter-repo">
          Repository
        </label>
        <input
          id="filter-repo"
          list="repositories"
          placeholder="owner/repo"
          defaultValue={filters.repository ?? ''}
          onBlur={(e) => setFilter({ repository: e.target.value.trim() || undefined })}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              setFilter({ repository: e.currentTarget.value.trim() || undefined });
            }
          }}
        />
        <datalist id="repositories">
          {repositories.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
      </form>

      {page.isPending ? (
        <Loading label="Loading sessions" />
      ) : page.isError && !page.data ? (
        <ErrorState error={page.error} onRetry={() => void page.refetch()} />
      ) : page.data && page.data.sessions.length === 0 ? (
        filtered ? (
          <EmptyState title="No sessions match">
            <p>Change the filters or clear the search to see more.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No sessions yet">
            <p>
              Start one from a prompt and a repository: the agent works on it and its transcript appears here.
            </p>
            <Link to="/new" className="button button-primary">
              Start a session
            </Link>
          </EmptyState>
        )
      ) : (
        <>
          <ul className="session-list" aria-label="Sessions">
            {page.data?.sessions.map((s) => (
              <SessionRow key={s.id} session={s} />
            ))}
          </ul>
          {(cursors.length > 1 || page.data?.nextCursor) && (
            <nav className="pager" aria-label="Pages">
              <button
                type="button"
                className="button"
                disabled={cursors.length === 1}
                onClick={() => setCursors(cursors.slice(0, -1))}
              >
                Newer
              </button>
              <span className="muted small">Page {cursors.length}</span>
              <button
                type="button"
                className="button"
                disabled={!page.data?.nextCursor}
                onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
              >
                Older
              </button>
            </nav>
          )}
        </>
      )}
    </div>
  );
}
