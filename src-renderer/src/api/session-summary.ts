import { useQuery } from '@tanstack/react-query';
import { SessionSummaryResponseSchema } from '../../../src-shared/session-summary';
import { api } from './client';
import { keys, POLL_MS, POLL_WHILE_LIVE_MS } from './queries';

/**
 * A session without its messages (the page reads those in pages). Under the session's own
 * key, so whatever refreshes the session (live events, a follow-up, a rename) refreshes it.
 */
export function useSessionSummary(id: string, live: boolean) {
  return useQuery({
    queryKey: [...keys.session(id), 'summary'],
    queryFn: () => api.get(`/api/sessions/${encodeURIComponent(id)}/summary`, SessionSummaryResponseSchema),
    refetchInterval: (query) =>
      live ? POLL_WHILE_LIVE_MS : query.state.data?.session.status === 'active' ? POLL_MS / 2 : POLL_MS * 3,
  });
}
