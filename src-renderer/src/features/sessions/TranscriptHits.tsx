import { Link } from 'react-router';
import type { AgentKind } from '../../../../src-shared/constants';
import type { SearchHit } from '../../../../src-shared/search';
import { useTranscriptSearch } from '../../api/queries';
import { SimulatedBadge } from '../../components/Badges';
import { RelativeTime } from '../../components/RelativeTime';
import { AGENT_NAMES } from '../../lib/usage';
import { EmptyState, ErrorState, Loading } from '../../components/States';

/** A snippet with its matched words marked. */
function Snippet({ hit }: { hit: SearchHit }) {
  const parts: Array<{ text: string; marked: boolean }> = [];
  let at = 0;
  for (const [start, end] of hit.highlights) {
    if (start < at) continue;
    if (start > at) parts.push({ text: hit.snippet.slice(at, start), marked: false });
    parts.push({ text: hit.snippet.slice(start, end), marked: true });
    at = end;
  }
  if (at < hit.snippet.length) parts.push({ text: hit.snippet.slice(at), marked: false });
  return (
    <span className="hit-snippet">
      {parts.map((part, i) =>
        part.marked ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
      )}
    </span>
  );
}

/** Hits in the order the server ranked them, gathered under the session of each. */
function bySession(hits: SearchHit[]): SearchHit[][] {
  const groups = new Map<string, SearchHit[]>();
  for (const hit of hits) {
    const group = groups.get(hit.sessionId);
    if (group) group.push(hit);
    else groups.set(hit.sessionId, [hit]);
  }
  return [...groups.values()];
}

/**
 * What the transcripts say: matches of the search in every message of the workspace's
 * sessions (prompts, answers, thinking, tool inputs and outputs), best first, under their
 * session. A match opens the session at its message.
 */
export function TranscriptHits({
  org,
  q,
  repository,
  agent,
}: {
  org: string;
  q: string;
  repository?: string | undefined;
  agent?: AgentKind | undefined;
}) {
  const search = useTranscriptSearch(org, q, repository, agent);
  if (search.isPending) return <Loading label="Searching transcripts" />;
  if (search.isError) return <ErrorState error={search.error} onRetry={() => void search.refetch()} />;
  const hits = search.data.pages.flatMap((page) => page.hits);
  const indexing = search.data.pages.at(-1)?.indexing;
  // Until the index holds every message, finding nothing proves nothing.
  const stillIndexing = indexing && !indexing.complete && (
    <p className="muted" role="status">
      Still indexing {indexing.pendingSessions.toLocaleString()}{' '}
      {indexing.pendingSessions === 1 ? 'session' : 'sessions'}: results may be incomplete.
    </p>
  );
  if (hits.length === 0) {
    return stillIndexing ? (
      <EmptyState title="No messages match yet">{stillIndexing}</EmptyState>
    ) : (
      <EmptyState title="No messages match">
        <p>No transcript of this workspace says “{q}”.</p>
      </EmptyState>
    );
  }
  return (
    <section aria-label="Transcript matches">
      {stillIndexing}
      <ul className="hit-groups">
        {bySession(hits).map((group) => {
          const first = group[0] as SearchHit;
          return (
            <li key={first.sessionId} className="hit-group">
              <div className="hit-group-head">
                <Link to={`/sessions/${first.sessionId}`} className="hit-session">
                  {first.title}
                </Link>
                {first.agent === 'demo' ? (
                  <SimulatedBadge />
                ) : (
                  first.agent && <span className="muted small">{AGENT_NAMES[first.agent]}</span>
                )}
                <span className="muted small">
                  <RelativeTime iso={first.createdAt} />
                </span>
              </div>
              <ul className="hits" aria-label={`Matches in ${first.title}`}>
                {group.map((hit) => (
                  <li key={hit.messageIndex}>
                    <Link
                      to={`/sessions/${hit.sessionId}?message=${hit.messageIndex}&q=${encodeURIComponent(q)}`}
                      className="hit"
                    >
                      <span className="hit-where muted small">Message {hit.messageIndex + 1}</span>
                      <Snippet hit={hit} />
                    </Link>
                  </li>
                ))}
              </ul>
            </li>
          );
        })}
      </ul>
      {search.hasNextPage && (
        <button
          type="button"
          className="button"
          disabled={search.isFetchingNextPage}
          onClick={() => void search.fetchNextPage()}
        >
          {search.isFetchingNextPage ? 'Loading…' : 'More matches'}
        </button>
      )}
    </section>
  );
}
