import { useCallback, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { AGENT_KINDS, SESSION_STATUSES } from '../../../../src-shared/constants';
import type { SessionSourceFilter, SessionSummary } from '../../../../src-shared/sessions';
import { useLive } from '../../api/live';
import {
  PAGE_SIZE,
  useMembers,
  useRepositories,
  useSessionsPage,
  type SessionFilters,
} from '../../api/queries';
import { Avatar } from '../../components/Avatar';
import {
  ImportedBadge,
  NeedsYouBadge,
  PrBadge,
  QueuedBadge,
  SimulatedBadge,
  StatusBadge,
} from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { displayTitle, plainText } from '../../lib/plain-text';
import { useDebouncedEffect } from '../../lib/use-debounced';
import { AGENT_NAMES } from '../../lib/usage';
import { SESSIONS_KEYS } from '../../lib/shortcuts';
import { useShortcut } from '../../lib/use-shortcut';
import { useWorkspace } from '../../lib/workspace';
import { FilterSelect } from './FilterSelect';
import { readListView, writeListView } from './list-params';
import { StatsCards } from './StatsCards';
import { TranscriptHits } from './TranscriptHits';

/** An update this soon after the start (the first prompt's own write) is not shown apart. */
const UPDATE_SHOWN_AFTER_MS = 60_000;

function SessionRow({ session }: { session: SessionSummary }) {
  const { metadata } = session;
  return (
    <li>
      <Link to={`/sessions/${session.id}`} className="session-row">
        <div className="session-main">
          <div className="session-title-line">
            <span className="session-title">{displayTitle(session.title, session.firstMessagePreview)}</span>
            <StatusBadge status={session.status} stopped={session.stopped} />
            {session.agentState === 'queued' && <QueuedBadge />}
            {session.agentState === 'needs_input' && <NeedsYouBadge />}
            {session.agent === 'demo' && <SimulatedBadge />}
            {session.source && <ImportedBadge kind={session.source.kind} />}
            {metadata.prNumber !== undefined && (
              <PrBadge number={metadata.prNumber} status={metadata.prStatus} />
            )}
          </div>
          {session.lastMessagePreview && (
            <p className="session-preview">{plainText(session.lastMessagePreview)}</p>
          )}
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
          {/* The list is ordered by when sessions started: that time is shown, named, and the
              latest update beside it when there was one since. */}
          <span className="muted session-times">
            started <RelativeTime iso={session.createdAt} />
            {Date.parse(session.updatedAt) - Date.parse(session.createdAt) >= UPDATE_SHOWN_AFTER_MS && (
              <>
                {' · '}updated <RelativeTime iso={session.updatedAt} />
              </>
            )}
          </span>
        </div>
      </Link>
    </li>
  );
}

const AGENT_OPTIONS = AGENT_KINDS.map((kind) => ({
  value: kind,
  label: kind === 'demo' ? 'Demo agent (simulated)' : AGENT_NAMES[kind],
}));
const SOURCE_OPTIONS = [
  { value: 'imported', label: 'Imported from CLIs' },
  { value: 'run', label: 'Run in Session Desk' },
] as const satisfies readonly { value: SessionSourceFilter; label: string }[];
const STATUS_OPTIONS = SESSION_STATUSES.map((status) => ({
  value: status,
  label: `${status[0]?.toUpperCase() ?? ''}${status.slice(1)}`,
}));

/** Typing waits this long before the list is asked again. */
const TYPING_DELAY_MS = 300;

/** Pages seen before this one, newest last: kept in the history entry, so Back and reload keep them. */
interface PagerState {
  previous?: (string | null)[];
}

export function SessionsPage() {
  const { workspace } = useWorkspace();
  const org = workspace.organizationId;
  const [params, setParams] = useSearchParams();
  const location = useLocation();
  const view = readListView(params);
  const { filters, cursor, transcripts } = view;
  const previous = (location.state as PagerState | null)?.previous ?? [];
  const page = useSessionsPage(org, filters, cursor, useLive());
  const members = useMembers(org);
  const repositories = useRepositories(org);
  const searchRef = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  useShortcut(
    SESSIONS_KEYS.search,
    useCallback(() => searchRef.current?.focus(), []),
  );
  useShortcut(
    SESSIONS_KEYS.newSession,
    useCallback(() => void navigate('/new'), [navigate]),
  );

  // The two text boxes follow the address when it changes under them (Back, a link) and
  // change it while the person types.
  const [search, setSearch] = useState(filters.q ?? '');
  const [repository, setRepository] = useState(filters.repository ?? '');
  const [shown, setShown] = useState({ q: filters.q ?? '', repository: filters.repository ?? '' });
  if (shown.q !== (filters.q ?? '') || shown.repository !== (filters.repository ?? '')) {
    setShown({ q: filters.q ?? '', repository: filters.repository ?? '' });
    if (search.trim() !== (filters.q ?? '')) setSearch(filters.q ?? '');
    if (repository.trim() !== (filters.repository ?? '')) setRepository(filters.repository ?? '');
  }

  const setFilters = (change: SessionFilters, options: { replace?: boolean } = {}) => {
    const next = writeListView({ filters: { ...filters, ...change }, cursor: undefined, transcripts });
    if (next.toString() === writeListView({ filters, cursor, transcripts }).toString()) return;
    setParams(next, { replace: options.replace ?? false });
  };
  const typed = { q: search.trim() || undefined, repository: repository.trim() || undefined };
  useDebouncedEffect(typed.q, TYPING_DELAY_MS, (q) => {
    if (q !== filters.q) setFilters({ q }, { replace: true });
  });
  useDebouncedEffect(typed.repository, TYPING_DELAY_MS, (value) => {
    if (value !== filters.repository) setFilters({ repository: value }, { replace: true });
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setFilters(typed);
  }
  function clearFilters() {
    setSearch('');
    setRepository('');
    setParams(new URLSearchParams());
  }
  function setTranscripts(on: boolean) {
    setParams(writeListView({ filters: { ...filters, ...typed }, cursor: undefined, transcripts: on }));
  }
  function goOlder(nextCursor: string) {
    setParams(writeListView({ filters, cursor: nextCursor }), {
      state: { previous: [...previous, cursor ?? null] } satisfies PagerState,
    });
  }
  function goNewer() {
    const before = previous.at(-1);
    setParams(writeListView({ filters, cursor: before ?? undefined }), {
      state: { previous: previous.slice(0, -1) } satisfies PagerState,
    });
  }

  const filtered = Object.values(filters).some(Boolean);
  // The page number is known when the pages before it were walked here (or came back with
  // the history entry); a shared link to a later page only knows it is not the first.
  const pageNumber = cursor === undefined ? 1 : previous.length > 0 ? previous.length + 1 : null;
  const count = page.data?.sessions.length ?? 0;
  const first = pageNumber === null ? null : (pageNumber - 1) * PAGE_SIZE + 1;

  return (
    <div className="page">
      <header className="page-header">
        <h1>Sessions</h1>
        <Link to="/new" className="button button-primary">
          New session <kbd>n</kbd>
        </Link>
      </header>
      <StatsCards stats={page.data?.stats} />
      <form className="filters" role="search" onSubmit={submit}>
        <label className="visually-hidden" htmlFor="search">
          {transcripts ? 'Search transcripts' : 'Search titles and prompts'}
        </label>
        <input
          id="search"
          ref={searchRef}
          type="search"
          className="filter-search"
          placeholder={transcripts ? 'Search every message  ( / )' : 'Search  ( / )'}
          title={
            transcripts
              ? 'Words in any order, "a phrase", prefix*: prompts, answers, thinking, tool input and output'
              : 'Search titles and first prompts'
          }
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <label
          className="filter-scope small"
          title="Search every message of every transcript, not only titles"
        >
          <input type="checkbox" checked={transcripts} onChange={(e) => setTranscripts(e.target.checked)} />
          In transcripts
        </label>
        <FilterSelect
          id="filter-agent"
          label="Agent"
          all="All agents"
          value={filters.agent}
          options={AGENT_OPTIONS}
          onChange={(agent) => setFilters({ agent })}
        />
        {/* Transcript search filters by agent and repository only: the rest apply to the list. */}
        {!transcripts && (
          <>
            <FilterSelect
              id="filter-source"
              label="Source"
              all="All sources"
              value={filters.source}
              options={SOURCE_OPTIONS}
              onChange={(source) => setFilters({ source })}
            />
            <FilterSelect
              id="filter-status"
              label="Status"
              all="All statuses"
              value={filters.status}
              options={STATUS_OPTIONS}
              onChange={(status) => setFilters({ status })}
            />
            <FilterSelect
              id="filter-author"
              label="Author"
              all="All authors"
              value={filters.authorId}
              options={(members.data?.members ?? []).map((m) => ({ value: m.userId, label: m.name }))}
              onChange={(authorId) => setFilters({ authorId })}
            />
          </>
        )}
        <label className="visually-hidden" htmlFor="filter-repo">
          Repository
        </label>
        <input
          id="filter-repo"
          list="repositories"
          className="filter-repo"
          placeholder="Repository"
          title="A repository (owner/repo), an owner, or a repository URL"
          autoComplete="off"
          value={repository}
          onChange={(e) => setRepository(e.target.value)}
        />
        <datalist id="repositories">
          {(repositories.data?.repositories ?? []).map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <button type="submit" className="visually-hidden" tabIndex={-1}>
          Search
        </button>
      </form>

      {transcripts && filters.q ? (
        <TranscriptHits org={org} q={filters.q} repository={filters.repository} agent={filters.agent} />
      ) : page.isPending ? (
        <Loading label="Loading sessions" />
      ) : page.isError && !page.data ? (
        <ErrorState error={page.error} onRetry={() => void page.refetch()} />
      ) : page.data && page.data.sessions.length === 0 ? (
        filtered ? (
          <EmptyState title="No sessions match">
            <p>Nothing matches these filters{filters.q ? ` and the search “${filters.q}”` : ''}.</p>
            <button type="button" className="button" onClick={clearFilters}>
              Clear filters
            </button>
          </EmptyState>
        ) : cursor ? (
          <EmptyState title="No more sessions">
            <Link to="/" className="button">
              Back to the newest
            </Link>
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
          {(cursor !== undefined || page.data?.nextCursor) && (
            <nav className="pager" aria-label="Pages">
              <button type="button" className="button" disabled={cursor === undefined} onClick={goNewer}>
                Newer
              </button>
              <span className="muted small" aria-live="polite">
                {first === null
                  ? `${count} older sessions`
                  : `Page ${pageNumber} · ${first}–${first + count - 1}${
                      page.data?.total === undefined ? '' : ` of ${page.data.total}`
                    }`}
              </span>
              <button
                type="button"
                className="button"
                disabled={!page.data?.nextCursor}
                onClick={() => page.data?.nextCursor && goOlder(page.data.nextCursor)}
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
