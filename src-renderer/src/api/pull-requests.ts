import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  GhStatusResponseSchema,
  PullRequestResponseSchema,
  type OpenPullRequestBody,
} from '../../../src-shared/pull-requests';
import { api } from './client';
import { keys } from './queries';

const pullRequestPath = (org: string, id: string, action = '') =>
  `/api/sessions/${encodeURIComponent(id)}/pull-request${action}?organizationId=${encodeURIComponent(org)}`;

/** Pushes the session's branch and opens its pull request (or answers the one it has). */
export function useOpenPullRequest(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: OpenPullRequestBody) =>
      api.post(pullRequestPath(org, id), PullRequestResponseSchema, body),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

/** Reads the pull request's status from GitHub and records it. */
export function useRefreshPullRequest(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api.post(pullRequestPath(org, id, '/refresh'), PullRequestResponseSchema),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

/** Whether the server finds the GitHub CLI; asked again after a minute, so that installing it shows without a reload. */
export function useGhStatus(enabled: boolean) {
  return useQuery({
    queryKey: ['pull-requests', 'tool'],
    queryFn: () => api.get('/api/pull-requests/tool', GhStatusResponseSchema),
    enabled,
    staleTime: 60_000,
  });
}
