import type { SessionStatus } from '../../src-shared/index.js';
import type { AgentFilter } from '../../src-shared/sessions.js';
import { STATS_WINDOW_MS } from '../../src-shared/constants.js';
import { repositoryFilter } from '../../src-shared/repo-url.js';
import type { SessionSourceFilter } from '../../src-shared/sessions.js';
import type { Db, Params } from './sqljs.js';
import { num, str } from './row.js';
import { roundDollars, SUMMARY_COLUMNS, toSessionRow, type SessionRow } from './session-row.js';
import { unknownCostBetween } from './unpriced-runs.js';

export interface ListFilters {
  status?: SessionStatus | undefined;
  repository?: string | undefined;
  authorId?: string | undefined;
  q?: string | undefined;
  agent?: AgentFilter | undefined;
  source?: SessionSourceFilter | undefined;
}

/** Position in the list's order (newest `createdAt` first, then `id`). */
export interface ListPosition {
  createdAt: string;
  id: string;
}

const ORIGIN_JOIN = 'LEFT JOIN session_origins o ON o.session_id = s.id';
const SUMMARY_FROM = `sessions s JOIN users u ON u.id = s.author_id ${ORIGIN_JOIN}`;
const ORIGIN_COLUMNS = ['machine', 'author_name', 'author_email', 'pushed_at', 'folder'];
/**
 * The same columns for one session. Measured in sql.js, a JOIN made finding one session
 * several times slower than these subqueries (users: 40 us against 12 us; the LEFT JOIN of
 * session_origins: 50 us against 7 us, 399 sessions), while for a page of 50 the JOIN is the
 * faster (245 us against 360 us); so each query has its own form.
 */
export const ONE_SUMMARY = `SELECT ${SUMMARY_COLUMNS.replace(
  'u.name, u.image_url',
  '(SELECT name FROM users WHERE id = s.author_id), (SELECT image_url FROM users WHERE id = s.author_id)',
).replace(
  ORIGIN_COLUMNS.map((column) => `o.${column}`).join(', '),
  ORIGIN_COLUMNS.map((column) => `(SELECT ${column} FROM session_origins WHERE session_id = s.id)`).join(
    ', ',
  ),
)} FROM sessions s WHERE s.id = ?`;

/** The WHERE terms (and their parameters) of a workspace's sessions matching the filters. */
function filterClause(workspaceId: string, filters: ListFilters): { where: string[]; params: Params } {
  const where = ['s.workspace_id = ?'];
  const params: Params = [workspaceId];
  if (filters.status) {
    where.push('s.status = ?');
    params.push(filters.status);
  }
  if (filters.repository) {
    const wanted = repositoryFilter(filters.repository);
    if ('owner' in wanted) {
      where.push('instr(lower(s.repository), ?) = 1');
      params.push(`${wanted.owner}/`);
    } else {
      where.push('lower(s.repository) = ?');
      params.push(wanted.repository);
    }
  }
  if (filters.authorId) {
    where.push('s.author_id = ?');
    params.push(filters.authorId);
  }
  if (filters.agent?.startsWith('acp:')) {
    where.push("s.agent_kind = 'acp' AND s.acp_agent = ?");
    params.push(filters.agent.slice('acp:'.length));
  } else if (filters.agent) {
    where.push('s.agent_kind = ?');
    params.push(filters.agent);
  }
  if (filters.source) where.push(`s.source_kind IS ${filters.source === 'imported' ? 'NOT NULL' : 'NULL'}`);
  if (filters.q) {
    where.push('(instr(lower(s.title), ?) > 0 OR instr(lower(s.first_message), ?) > 0)');
    const q = filters.q.toLowerCase();
    params.push(q, q);
  }
  return { where, params };
}

/**
 * The sessions as a list: one page in the list's order with its filters, the total, the
 * workspace's stats and repositories, every session's message count. Spread into the sessions
 * repository: one repository to its callers.
 */
export function sessionListMethods(db: Db) {
  return {
    /**
     * Every session's id and message count, or those of one workspace's sessions: what the
     * search index compares itself with.
     */
    messageCounts(workspaceId?: string): Array<{ id: string; messageCount: number }> {
      const rows =
        workspaceId === undefined
          ? db.all('SELECT id, message_count FROM sessions')
          : db.all('SELECT id, message_count FROM sessions WHERE workspace_id = ?', [workspaceId]);
      return rows.map((r) => ({ id: str(r[0]), messageCount: num(r[1]) }));
    },
    /**
     * One page in the list's order. With `after`, starts strictly after that position, so
     * sessions created or updated meanwhile neither repeat nor push others off the page.
     */
    list(
      workspaceId: string,
      filters: ListFilters,
      page: { limit?: number; after?: ListPosition },
    ): SessionRow[] {
      const { where, params } = filterClause(workspaceId, filters);
      if (page.after) {
        where.push('(s.created_at < ? OR (s.created_at = ? AND s.id < ?))');
        params.push(page.after.createdAt, page.after.createdAt, page.after.id);
      }
      let sql = `SELECT ${SUMMARY_COLUMNS} FROM ${SUMMARY_FROM} WHERE ${where.join(' AND ')}
        ORDER BY s.created_at DESC, s.id DESC`;
      if (page.limit !== undefined) {
        sql += ' LIMIT ?';
        params.push(page.limit);
      }
      return db.all(sql, params).map(toSessionRow);
    },

    /** How many sessions of the workspace match the filters (the list's total). */
    count(workspaceId: string, filters: ListFilters): number {
      const { where, params } = filterClause(workspaceId, filters);
      return num(db.first(`SELECT count(*) FROM sessions s WHERE ${where.join(' AND ')}`, params)?.[0] ?? 0);
    },

    /**
     * The stats, computed in SQL; "the last 7 days" includes its first millisecond.
     * People's latest activity is kept per workspace (workspace_people), so this reads one
     * row per person; a clock set back before someone's latest activity would hide their
     * earlier activity from the window, which only a test clock does.
     */
    stats(workspaceId: string, now: Date) {
      const until = now.toISOString();
      const since = new Date(now.getTime() - STATS_WINDOW_MS).toISOString();
      const count = (sql: string, params: Params) => num(db.first(sql, params)?.[0] ?? 0);
      const unknown = unknownCostBetween(db, workspaceId, since, until);
      // The demo agent's made-up cost is kept apart from what real agents reported.
      const simulated = roundDollars(
        count(
          `SELECT coalesce(sum(cost_usd), 0) FROM agent_runs
           WHERE workspace_id = ? AND ended_at >= ? AND ended_at <= ? AND kind = 'demo'`,
          [workspaceId, since, until],
        ),
      );
      return {
        mergesPastWeek: count(
          `SELECT count(*) FROM sessions WHERE workspace_id = ? AND pr_status = 'merged'
             AND pr_merged_at >= ? AND pr_merged_at <= ?`,
          [workspaceId, since, until],
        ),
        authorsPastWeek: count(
          `SELECT count(*) FROM workspace_people
           WHERE workspace_id = ? AND last_session_at >= ? AND last_session_at <= ?`,
          [workspaceId, since, until],
        ),
        humansPastWeek: count(
          `SELECT count(*) FROM workspace_people
           WHERE workspace_id = ? AND last_prompt_at >= ? AND last_prompt_at <= ?`,
          [workspaceId, since, until],
        ),
        humansPromptingNow: count(
          'SELECT count(*) FROM workspace_people WHERE workspace_id = ? AND active_sessions > 0',
          [workspaceId],
        ),
        costPastWeek: roundDollars(
          count(
            `SELECT coalesce(sum(cost_usd), 0) FROM agent_runs
             WHERE workspace_id = ? AND ended_at >= ? AND ended_at <= ? AND kind <> 'demo'`,
            [workspaceId, since, until],
          ),
        ),
        ...(simulated > 0 ? { simulatedCostPastWeek: simulated } : {}),
        ...(unknown ? { costUnknownPastWeek: unknown } : {}),
      };
    },

    /** The distinct repositories of a workspace's sessions, in alphabetical order. */
    repositories(workspaceId: string): string[] {
      return db
        .all(
          `SELECT DISTINCT repository FROM sessions WHERE workspace_id = ? AND repository IS NOT NULL
           ORDER BY lower(repository), repository`,
          [workspaceId],
        )
        .map((r) => str(r[0]));
    },
  };
}
