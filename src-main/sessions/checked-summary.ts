import { SessionSummarySchema, type SessionSummary } from '../../src-shared/sessions.js';
import type { Logger } from '../clock.js';
import type { SessionRow } from '../store/session-row.js';
import { toSummary, type PreviewForm } from './summary.js';
import { normalTimestamp } from './timestamps.js';

/**
 * The summary of a row as the API's schema has it, or null when it cannot be.
 *
 * A list is built from typed rows and sent without Fastify validating it again (too slow for
 * 10,000 sessions), and the dashboard parses a list as a whole: one row that fails the schema
 * would make every session of the workspace unreadable. So each row is checked here, once, when
 * its page is built (pages are cached). A row that fails (stored by an older version, or by a
 * bug) is repaired only where the repair is exact: a time in another ISO form is put in the
 * API's form, the same instant. A row that still fails is left out of the list rather than
 * shown with made-up values; both are logged as errors naming the session, which stays reachable
 * by its id.
 */
export function checkedSummary(
  row: SessionRow,
  previews: PreviewForm,
  logger: Logger,
): SessionSummary | null {
  const summary = toSummary(row, previews);
  const first = SessionSummarySchema.safeParse(summary);
  if (first.success) return summary;
  const fields = (issues: { path: PropertyKey[] }[]) => issues.map((i) => i.path.join('.')).join(', ');
  const repaired: SessionSummary = {
    ...summary,
    createdAt: normalTimestamp(summary.createdAt) ?? summary.createdAt,
    updatedAt: normalTimestamp(summary.updatedAt) ?? summary.updatedAt,
  };
  const second = SessionSummarySchema.safeParse(repaired);
  if (second.success) {
    logger.error(
      `Session ${row.id} holds values out of the API's form (${fields(first.error.issues)}): shown repaired`,
    );
    return repaired;
  }
  logger.error(
    `Session ${row.id} holds values out of the API's form (${fields(second.error.issues)}): left out of its list`,
  );
  return null;
}
