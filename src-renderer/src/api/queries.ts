import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { z } from 'zod';
import {
  AgentKindsResponseSchema,
  AgentSettingsResponseSchema,
  type AgentSettings,
  CreatedKeyResponseSchema,
  InvitationResponseSchema,
  KeysResponseSchema,
  MeResponseSchema,
  MemberResponseSchema,
  MembersResponseSchema,
  type SetupBodySchema,
  SetupResponseSchema,
  SetupStatusSchema,
  SignInResponseSchema,
  WorkspaceResponseSchema,
} from '../../../src-shared/accounts';
import { AgentCheckSchema } from '../../../src-shared/agent-check';
import {
  ListSessionsResponseSchema,
  RepositoriesResponseSchema,
  SessionResponseSchema,
  type CreateSessionBody,
  type SessionSourceFilter,
  type SessionStatus,
  type UpdateSessionBody,
} from '../../../src-shared/sessions';
import { SessionChangesResponseSchema } from '../../../src-shared/changes';
import { SessionReviewsResponseSchema, type ReviewBody } from '../../../src-shared/review';
import type { AgentKind } from '../../../src-shared/constants';
import { ContinuationChoicesResponseSchema } from '../../../src-shared/continuation';
import { SearchResponseSchema } from '../../../src-shared/search';
import { HistorySourceResponseSchema, HistorySourcesResponseSchema } from '../../../src-shared/history';
import { AuthMethodsSchema } from '../../../src-shared/sign-in';
import type { FollowUpBody, HistoryKind } from '../../../src-shared/sessions';
import { api } from './client';

/**
 * How often open views refresh by polling. Live events refresh them as things happen; polling
 * is the fallback while the event stream is not connected.
 */
export const POLL_MS = 3000;
export const POLL_WHILE_LIVE_MS = 30_000;

export const keys = {
  me: ['me'] as const,
  authMethods: ['auth-methods'] as const,
  setup: ['setup'] as const,
  sessions: (org: string) => ['sessions', org] as const,
  session: (id: string) => ['session', id] as const,
  keys: (org: string) => ['keys', org] as const,
  members: (org: string) => ['members', org] as const,
  repositories: (org: string) => ['repositories', org] as const,
  historySources: (org: string) => ['history-sources', org] as const,
  approvals: (org: string) => ['approvals', org] as const,
};

export function useSetupStatus() {
  return useQuery({ queryKey: keys.setup, queryFn: () => api.get('/api/setup', SetupStatusSchema) });
}

/** Signs in as the demo owner: only for a browser that presented the launch token. */
export function useDemoSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api.post('/api/demo/sign-in', SignInResponseSchema),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.me }),
  });
}

/** How this server signs people in: a password, its identity provider, or both. */
export function useAuthMethods() {
  return useQuery({
    queryKey: keys.authMethods,
    queryFn: () => api.get('/api/auth/methods', AuthMethodsSchema),
    staleTime: Infinity,
  });
}

export function useMe() {
  return useQuery({
    queryKey: keys.me,
    queryFn: () => api.get('/api/auth/me', MeResponseSchema),
    retry: false,
  });
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { email: string; password: string }) =>
      api.post('/api/auth/sign-in', SignInResponseSchema, body),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.me }),
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api.post('/api/auth/sign-out', z.null()),
    // Forget everything this user could see, and ask again who is signed in (nobody).
    onSuccess: () => client.resetQueries(),
  });
}

/** Trades the setup code `serve` printed (a server with a public URL) for this browser's launch cookie. */
export function useSetupCode() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => api.post('/api/auth/launch', z.null(), { token: code }),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.setup }),
  });
}

export function useSetup() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: z.input<typeof SetupBodySchema>) => api.post('/api/setup', SetupResponseSchema, body),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.setup });
      await client.invalidateQueries({ queryKey: keys.me });
    },
  });
}

export interface SessionFilters {
  status?: SessionStatus | undefined;
  repository?: string | undefined;
  authorId?: string | undefined;
  q?: string | undefined;
  agent?: AgentKind | undefined;
  source?: SessionSourceFilter | undefined;
}

export const PAGE_SIZE = 50;

export function sessionsQueryString(org: string, filters: SessionFilters, cursor?: string): string {
  const params = new URLSearchParams({ organizationId: org, limit: String(PAGE_SIZE) });
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, String(value));
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

/** One page of the list, refreshed in the background. */
/** Full-text search over the workspace's transcripts, a page of hits at a time. */
export function useTranscriptSearch(
  org: string,
  q: string,
  repository: string | undefined,
  agent: AgentKind | undefined,
) {
  return useInfiniteQuery({
    queryKey: [...keys.sessions(org), 'search', q, repository ?? null, agent ?? null],
    queryFn: ({ pageParam }) => {
      const params = new URLSearchParams({ organizationId: org, q, limit: '30' });
      if (repository) params.set('repository', repository);
      if (agent) params.set('agent', agent);
      if (pageParam) params.set('cursor', pageParam);
      return api.get(`/api/search?${params.toString()}`, SearchResponseSchema);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor ?? null,
    enabled: q.trim() !== '',
    // While the index catches up (a first index, an import), asked again until it has.
    refetchInterval: (query) =>
      query.state.data?.pages.at(-1)?.indexing.complete === false ? POLL_MS : false,
  });
}

export function useSessionsPage(
  org: string,
  filters: SessionFilters,
  cursor: string | undefined,
  live: boolean,
) {
  return useQuery({
    queryKey: [...keys.sessions(org), filters, cursor ?? null],
    queryFn: () =>
      api.get(`/api/sessions?${sessionsQueryString(org, filters, cursor)}`, ListSessionsResponseSchema),
    placeholderData: keepPreviousData,
    refetchInterval: live ? POLL_WHILE_LIVE_MS : POLL_MS,
  });
}

/** A session's changes from git; asked again whenever the session moves (`updatedAt`). */
export function useSessionChanges(id: string, org: string, updatedAt: string) {
  return useQuery({
    queryKey: [...keys.session(id), 'changes', updatedAt],
    queryFn: () =>
      api.get(
        `/api/sessions/${encodeURIComponent(id)}/changes?organizationId=${encodeURIComponent(org)}`,
        SessionChangesResponseSchema,
      ),
    placeholderData: keepPreviousData,
  });
}

/** The reviews sent in a session, read again as the session moves (a review adds a message). */
export function useSessionReviews(id: string, org: string, updatedAt: string, enabled: boolean) {
  return useQuery({
    queryKey: [...keys.session(id), 'reviews', updatedAt],
    queryFn: () =>
      api.get(
        `/api/sessions/${encodeURIComponent(id)}/review?organizationId=${encodeURIComponent(org)}`,
        SessionReviewsResponseSchema,
      ),
    enabled,
    placeholderData: keepPreviousData,
  });
}

/** Sends the comments on lines of the session's changes to its agent, as one follow-up. */
export function useSendReview(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ReviewBody) =>
      api.post(
        `/api/sessions/${encodeURIComponent(id)}/review?organizationId=${encodeURIComponent(org)}`,
        SessionResponseSchema,
        body,
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

/** Where a follow-up to an imported session can go on now, and why not; asked again as the session moves. */
export function useContinuation(org: string, id: string, updatedAt: string, imported: boolean) {
  return useQuery({
    queryKey: [...keys.session(id), 'continuation', updatedAt],
    queryFn: () =>
      api.get(
        `/api/sessions/${encodeURIComponent(id)}/continuation?organizationId=${encodeURIComponent(org)}`,
        ContinuationChoicesResponseSchema,
      ),
    enabled: imported,
    placeholderData: keepPreviousData,
  });
}

export function useFollowUp(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: FollowUpBody) =>
      api.post(
        `/api/sessions/${encodeURIComponent(id)}/messages?organizationId=${encodeURIComponent(org)}`,
        SessionResponseSchema,
        body,
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

export function useAgentSettings(org: string) {
  return useQuery({
    queryKey: ['agent', org],
    queryFn: () => api.get(`/api/workspaces/${encodeURIComponent(org)}/agent`, AgentSettingsResponseSchema),
  });
}

/** The agent kinds and whether each agent CLI is installed on the server. */
export function useAgentKinds(enabled = true) {
  return useQuery({
    queryKey: ['agent-kinds'],
    queryFn: () => api.get('/api/agents', AgentKindsResponseSchema),
    enabled,
  });
}

/** Checks the workspace's saved agent as a session would run it (owners only). */
export function useCheckAgent(org: string) {
  return useMutation({
    mutationFn: () => api.post(`/api/workspaces/${encodeURIComponent(org)}/agent/check`, AgentCheckSchema),
  });
}

export function useSaveAgentSettings(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (settings: AgentSettings) =>
      api.put(`/api/workspaces/${encodeURIComponent(org)}/agent`, AgentSettingsResponseSchema, settings),
    onSuccess: (data) => client.setQueryData(['agent', org], data),
  });
}

export function useDemoSetup() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api.post('/api/setup/demo', SetupResponseSchema),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.setup });
      await client.invalidateQueries({ queryKey: keys.me });
    },
  });
}

export function useCreateSession() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateSessionBody) => api.post('/api/sessions', SessionResponseSchema, body),
    onSuccess: (_data, body) => client.invalidateQueries({ queryKey: keys.sessions(body.organizationId) }),
  });
}

export function useUpdateSession(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateSessionBody) =>
      api.patch(
        `/api/sessions/${encodeURIComponent(id)}?organizationId=${encodeURIComponent(org)}`,
        SessionResponseSchema,
        body,
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

const orgPath = (org: string) => `/api/workspaces/${encodeURIComponent(org)}`;

export function useKeys(org: string) {
  return useQuery({
    queryKey: keys.keys(org),
    queryFn: () => api.get(`${orgPath(org)}/keys`, KeysResponseSchema),
  });
}

export function useCreateKey(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (label: string) =>
      api.post(`${orgPath(org)}/keys`, CreatedKeyResponseSchema, label ? { label } : {}),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.keys(org) }),
  });
}

export function useRevokeKey(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (keyId: string) => api.delete(`${orgPath(org)}/keys/${encodeURIComponent(keyId)}`, z.null()),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.keys(org) }),
  });
}

export function useMembers(org: string) {
  return useQuery({
    queryKey: keys.members(org),
    queryFn: () => api.get(`${orgPath(org)}/members`, MembersResponseSchema),
  });
}

/** Adds the account with that email; an email without one is invited (the answer says which). */
export function useAddMember(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { email: string; name?: string; password?: string }) =>
      api.post(`${orgPath(org)}/members`, z.union([MemberResponseSchema, InvitationResponseSchema]), body),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.members(org) }),
  });
}

export function useWithdrawInvitation(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (email: string) =>
      api.delete(`${orgPath(org)}/invitations/${encodeURIComponent(email)}`, z.null()),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.members(org) }),
  });
}

export function useRemoveMember(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) =>
      api.delete(`${orgPath(org)}/members/${encodeURIComponent(userId)}`, z.null()),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.members(org) }),
  });
}

export function useCreateWorkspace() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.post('/api/workspaces', WorkspaceResponseSchema, { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.me }),
  });
}

/** The distinct repositories of the workspace's sessions, for the repository filter. */
export function useRepositories(org: string) {
  return useQuery({
    queryKey: keys.repositories(org),
    queryFn: () => api.get(`${orgPath(org)}/repositories`, RepositoriesResponseSchema),
    staleTime: 60_000,
  });
}

export function useStopSession(org: string, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () =>
      api.post(
        `/api/sessions/${encodeURIComponent(id)}/stop?organizationId=${encodeURIComponent(org)}`,
        SessionResponseSchema,
      ),
    onSettled: async () => {
      await client.invalidateQueries({ queryKey: keys.session(id) });
      await client.invalidateQueries({ queryKey: keys.sessions(org) });
    },
  });
}

export function useHistorySources(org: string) {
  return useQuery({
    queryKey: keys.historySources(org),
    queryFn: () => api.get(`${orgPath(org)}/history-sources`, HistorySourcesResponseSchema),
    // The server follows the sources: their counts grow while the page is open.
    refetchInterval: 5_000,
  });
}

export function useAddHistorySource(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { kind: HistoryKind; rootDir: string }) =>
      api.post(`${orgPath(org)}/history-sources`, HistorySourceResponseSchema, body),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.historySources(org) }),
  });
}

export function usePauseHistorySource(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
      api.patch(`${orgPath(org)}/history-sources/${encodeURIComponent(id)}`, HistorySourceResponseSchema, {
        paused,
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.historySources(org) }),
  });
}

export function useRemoveHistorySource(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      api.delete(`${orgPath(org)}/history-sources/${encodeURIComponent(id)}`, z.null()),
    onSuccess: () => client.invalidateQueries({ queryKey: keys.historySources(org) }),
  });
}
