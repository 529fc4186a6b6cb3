import type { ApprovalRulesPreview } from '../../../../src-shared/accounts';

/** "the last 3 requests", or "the one request so far". */
function lastRequests(considered: number): string {
  return considered === 1 ? 'the one request so far' : `the last ${considered} requests`;
}

export function PreviewLine({
  preview,
  index,
  stale,
}: {
  preview: ApprovalRulesPreview | undefined;
  index: number;
  stale: boolean;
}) {
  const counted = preview?.rules[index];
  if (!preview || !counted || preview.considered === 0) return null;
  return (
    <div className={stale ? 'rule-preview rule-preview-stale muted small' : 'rule-preview muted small'}>
      <span>
        Would have decided {counted.decided} of {lastRequests(preview.considered)}
        {counted.examples.length > 0 ? ':' : '.'}
      </span>
      {counted.examples.map((title, i) => (
        <code key={i} title={title}>
          {title}
        </code>
      ))}
    </div>
  );
}

/** What becomes of the requests no rule matches, in words. */
export function restWords(preview: ApprovalRulesPreview): string {
  if (preview.considered === 0)
    return 'No requests yet to try the rules on: the preview counts the latest 50 of this workspace.';
  const { count, decision } = preview.rest;
  const verb = decision === 'ask' ? 'asked' : 'allowed';
  const rest =
    count === 0
      ? 'every one matches a rule'
      : count === 1
        ? `1 matches no rule and would be ${verb}`
        : `${count} match no rule and would be ${verb}`;
  return `Of ${lastRequests(preview.considered)}, ${rest}.`;
}
