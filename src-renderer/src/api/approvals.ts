import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  ApprovalResponseSchema,
  ApprovalsResponseSchema,
  type DecideApprovalBody,
} from '../../../src-shared/approvals';
import { api } from './client';
import { keys, POLL_MS, POLL_WHILE_LIVE_MS } from './queries';

/**
 * The workspace's pending requests, oldest first: one list for the Inbox, its count in the
 * navigation and the session pages, refreshed by the live events (`approval.*`).
 */
export function usePendingApprovals(org: string, live: boolean) {
  return useQuery({
    queryKey: keys.approvals(org),
    queryFn: () =>
      api.get(`/api/approvals?organizationId=${encodeURIComponent(org)}`, ApprovalsResponseSchema),
    refetchInterval: live ? POLL_WHILE_LIVE_MS : POLL_MS,
  });
}

/** A decision on one request; whatever the answer, the list and the session are read again. */
export function useDecideApproval(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; sessionId: string; body: DecideApprovalBody }) =>
      api.post(`/api/approvals/${encodeURIComponent(id)}`, ApprovalResponseSchema, body),
    onSettled: async (_data, _error, { sessionId }) => {
      await client.invalidateQueries({ queryKey: keys.approvals(org) });
      await client.invalidateQueries({ queryKey: keys.session(sessionId) });
    },
  });
}
