import type { AgentKind } from '../../src-shared/constants.js';
import { STATS_WINDOW_MS } from '../../src-shared/constants.js';
import { repositoryFilter } from '../../src-shared/repo-url.js';
import { MAX_UNPRICED_MODELS, type Stats } from '../../src-shared/sessions.js';
import { roundDollars, SUMMARY_COLUMNS, toSessionRow, type SessionRow } from '../store/session-row.js';
import type { Row } from '../store/sqljs.js';
import type { ListFilters } from '../store/session-listing.js';
import type { Repos } from '../store/storage.js';
import type { Queryable } from './rows.js';

/** The columns of a summary, from sessions `s` with their authors `u` and origins `o`. */
export function summaryFrom(sql: Queryable) {
  return sql`SELECT ${sql.unsafe(SUMMARY_COLUMNS)} FROM sessions s JOIN users u ON u.id = s.author_id
    LEFT JOIN session_origins o ON o.session_id = s.id`;
}

/** Rows as sql.js answers them (positional, numbers for every integer), read by toSessionRow. */
export function summaries(rows: unknown[][]): SessionRow[] {
  return (rows as Row[]).map(toSessionRow);
}

type ListMethods = Pick<Repos['sessions'], 'messageCounts' | 'list' | 'count' | 'stats' | 'repositories'>;

/**
 * The WHERE of a workspace's sessions matching the filters. Matching is sql.js's: `lower()`
 * there folds ASCII letters only, here the database's own (every letter, under a UTF-8 locale).
 */
export function filterClause(sql: Queryable, workspaceId: string, filters: ListFilters) {
  const terms = [sql`s.workspace_id = ${workspaceId}`];
  if (filters.status) terms.push(sql`s.status = ${filters.status}`);
  if (filters.repository) {
    const wanted = repositoryFilter(filters.repository);
    terms.push(
      'owner' in wanted
        ? sql`strpos(lower(s.repository), ${`${wanted.owner}/`}) = 1`
        : sql`lower(s.repository) = ${wanted.repository}`,
    );
  }
  if (filters.authorId) terms.push(sql`s.author_id = ${filters.authorId}`);
  if (filters.agent?.startsWith('acp:')) {
    terms.push(sql`s.agent_kind = 'acp' AND s.acp_agent = ${filters.agent.slice('acp:'.length)}`);
  } else if (filters.agent) {
    terms.push(sql`s.agent_kind = ${filters.agent}`);
  }
  if (filters.source) {
    terms.push(filters.source === 'imported' ? sql`s.source_kind IS NOT NULL` : sql`s.source_kind IS NULL`);
  }
  if (filters.q) {
    const q = filters.q.toLowerCase();
    terms.push(sql`(strpos(lower(s.title), ${q}) > 0 OR strpos(lower(s.first_message), ${q}) > 0)`);
  }
  return terms.reduce((all, term) => sql`${all} AND ${term}`);
}

/** The runs of unknown cost in the window, per agent kind, as `unknownCostBetween` counts them. */
async function unknownCostBetween(
  sql: Queryable,
  workspaceId: string,
  since: string,
  until: string,
): Promise<Stats['costUnknownPastWeek']> {
  const unknownRun = sql`workspace_id = ${workspaceId} AND ended_at >= ${since} AND ended_at <= ${until}
    AND kind <> 'demo' AND cost_usd IS NULL
    AND input_tokens + output_tokens + cache_read_tokens + cache_write_tokens > 0`;
  const byKind = await sql<Array<{ kind: string; sessions: number }>>`
    SELECT kind, count(DISTINCT session_id) AS sessions FROM agent_runs WHERE ${unknownRun}
    GROUP BY kind ORDER BY kind COLLATE "C"`;
  if (byKind.length === 0) return undefined;
  const models = await sql<Array<{ kind: string; unpriced_model: string }>>`
    SELECT DISTINCT kind COLLATE "C" AS kind, unpriced_model COLLATE "C" AS unpriced_model FROM agent_runs
    WHERE ${unknownRun} AND unpriced_model IS NOT NULL ORDER BY 1, 2`;
  return byKind.map((r) => ({
    agent: r.kind as AgentKind,
    sessions: r.sessions,
    models: models
      .filter((m) => m.kind === r.kind)
      .map((m) => m.unpriced_model)
      .slice(0, MAX_UNPRICED_MODELS),
  }));
}

/**
 * The sessions as a list (`store/session-listing.ts`), on PostgreSQL. Ties of `created_at`
 * go by id, as on sql.js; ids compare byte by byte (`COLLATE "C"`) whatever the database's locale.
 */
export function postgresSessionListing(sql: Queryable): ListMethods {
  return {
    async messageCounts(workspaceId) {
      const rows = await sql<Array<{ id: string; message_count: number }>>`
        SELECT id, message_count FROM sessions
        ${workspaceId === undefined ? sql`` : sql`WHERE workspace_id = ${workspaceId}`}`;
      return rows.map((r) => ({ id: r.id, messageCount: r.message_count }));
    },

    async list(workspaceId, filters, page) {
      const after = page.after
        ? sql`AND (s.created_at < ${page.after.createdAt}
            OR (s.created_at = ${page.after.createdAt} AND s.id COLLATE "C" < ${page.after.id}))`
        : sql``;
      const limit = page.limit === undefined ? sql`` : sql`LIMIT ${page.limit}`;
      const rows = await sql`${summaryFrom(sql)} WHERE ${filterClause(sql, workspaceId, filters)} ${after}
        ORDER BY s.created_at DESC, s.id COLLATE "C" DESC ${limit}`.values();
      return summaries(rows);
    },

    async count(workspaceId, filters) {
      const [row] = await sql<Array<{ count: number }>>`
        SELECT count(*) AS count FROM sessions s WHERE ${filterClause(sql, workspaceId, filters)}`;
      return row?.count ?? 0;
    },

    async stats(workspaceId, now) {
      const until = now.toISOString();
      const since = new Date(now.getTime() - STATS_WINDOW_MS).toISOString();
      const window = sql`workspace_id = ${workspaceId} AND ended_at >= ${since} AND ended_at <= ${until}`;
      const [row] = await sql<Array<Record<string, number>>>`SELECT
        (SELECT count(*) FROM sessions WHERE workspace_id = ${workspaceId} AND pr_status = 'merged'
          AND pr_merged_at >= ${since} AND pr_merged_at <= ${until}) AS merges,
        (SELECT count(*) FROM workspace_people WHERE workspace_id = ${workspaceId}
          AND last_session_at >= ${since} AND last_session_at <= ${until}) AS authors,
        (SELECT count(*) FROM workspace_people WHERE workspace_id = ${workspaceId}
          AND last_prompt_at >= ${since} AND last_prompt_at <= ${until}) AS humans,
        (SELECT count(*) FROM workspace_people WHERE workspace_id = ${workspaceId}
          AND active_sessions > 0) AS prompting,
        (SELECT coalesce(sum(cost_usd), 0) FROM agent_runs WHERE ${window} AND kind <> 'demo') AS cost,
        (SELECT coalesce(sum(cost_usd), 0) FROM agent_runs WHERE ${window} AND kind = 'demo') AS simulated`;
      const unknown = await unknownCostBetween(sql, workspaceId, since, until);
      // The demo agent's made-up cost is kept apart from what real agents reported.
      const simulated = roundDollars(row?.simulated ?? 0);
      return {
        mergesPastWeek: row?.merges ?? 0,
        authorsPastWeek: row?.authors ?? 0,
        humansPastWeek: row?.humans ?? 0,
        humansPromptingNow: row?.prompting ?? 0,
        costPastWeek: roundDollars(row?.cost ?? 0),
        ...(simulated > 0 ? { simulatedCostPastWeek: simulated } : {}),
        ...(unknown ? { costUnknownPastWeek: unknown } : {}),
      };
    },

    async repositories(workspaceId) {
      const rows = await sql<Array<{ repository: string }>>`
        SELECT repository FROM (SELECT DISTINCT repository FROM sessions
          WHERE workspace_id = ${workspaceId} AND repository IS NOT NULL) r
        ORDER BY lower(repository) COLLATE "C", repository COLLATE "C"`;
      return rows.map((r) => r.repository);
    },
  };
}
