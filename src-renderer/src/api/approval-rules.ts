import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { ApprovalRulesPreviewSchema, type ApprovalRulesPreviewBody } from '../../../src-shared/accounts';
import { api } from './client';

/**
 * What draft rules would have decided of the workspace's latest requests, asked again whenever
 * the draft changes (the last answer stays shown meanwhile); `null` asks nothing.
 */
export function useApprovalRulesPreview(org: string, draft: ApprovalRulesPreviewBody | null) {
  return useQuery({
    queryKey: ['approval-rules-preview', org, draft],
    queryFn: () =>
      api.post(
        `/api/workspaces/${encodeURIComponent(org)}/approval-rules/preview`,
        ApprovalRulesPreviewSchema,
        draft,
      ),
    enabled: draft !== null,
    placeholderData: keepPreviousData,
  });
}
