import type { SessionStatus, Usage } from '../../src-shared/index.js';
import type { AgentKind } from '../../src-shared/constants.js';
import type { AgentFilter } from '../../src-shared/sessions.js';
import { STATS_WINDOW_MS } from '../../src-shared/constants.js';
import { repositoryFilter } from '../../src-shared/repo-url.js';
import type { Isolation, PushedFrom, SessionSource, SessionSourceFilter } from '../../src-shared/sessions.js';
import type { Db, Params, Row } from './sqljs.js';
import { num, str } from './row.js';
import type { AgentState } from './session-runs.js';
import { costUnknownOf, unknownCostBetween } from './unpriced-runs.js';

/** A session as stored, with what the summary form needs; no messages. */
export interface SessionRow {
  id: string;
  workspaceId: string;
  title: string;
  status: SessionStatus;
  createdAt: string;
  updatedAt: string;
  model: string;
  authorId: string;
  authorName: string;
  authorImageUrl?: string;
  repository?: string;
  branch?: string;
  prNumber?: number;
  prUrl?: string;
  prStatus?: 'draft' | 'open' | 'merged' | 'closed';
  messageCount: number;
  /** Committed bytes of the transcript file (0 while it has no messages). */
  transcriptBytes: number;
  firstPreview?: string;
  lastPreview?: string;
  /** The agent kind of the latest run. */
  agentKind?: AgentKind;
  /** With agentKind `acp`: the ACP agent's id. */
  acpAgent?: string;
  /** Summed over the runs that reported usage. */
  usage?: Usage;
  /** Whether an agent is working on the session now, or waiting for a place to. */
  agentState?: AgentState;
  /** Set on a session imported from an agent CLI's own session file. */
  source?: SessionSource;
  /** Whether the latest run of a program went in an operating-system sandbox. */
  isolation?: Isolation;
  /** Set while the session's latest run was stopped on request and it stays completed. */
  stopped?: true;
  /** Set on a session a desktop pushed here (`sessiondesk push`). */
  pushedFrom?: PushedFrom;
}

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

/** A run waiting for someone to decide what its agent asked shows so (the request is the truth). */
const AGENT_STATE = `CASE WHEN s.agent_state = 'running' AND EXISTS (SELECT 1 FROM approvals a
  WHERE a.session_id = s.id AND a.decided_at IS NULL) THEN 'needs_input' ELSE s.agent_state END`;
const SUMMARY_COLUMNS = `s.id, s.workspace_id, s.title, s.status, s.created_at, s.updated_at, s.model,
  s.author_id, u.name, u.image_url, s.repository, s.branch, s.pr_number, s.pr_url, s.pr_status,
  s.message_count, s.first_preview, s.last_preview, s.transcript_bytes, s.agent_kind, s.usage_input,
  s.usage_output, s.usage_cache_read, s.usage_cache_write, s.usage_cost_usd, ${AGENT_STATE}, s.source_kind,
  s.source_path, s.source_cwd, s.source_conversation_id, s.isolation, s.stopped, s.usage_unpriced_runs,
  s.usage_unpriced_models, s.acp_agent, o.machine, o.author_name, o.author_email, o.pushed_at`;
const ORIGIN_JOIN = 'LEFT JOIN session_origins o ON o.session_id = s.id';
const SUMMARY_FROM = `sessions s JOIN users u ON u.id = s.author_id ${ORIGIN_JOIN}`;
const ORIGIN_COLUMNS = ['machine', 'author_name', 'author_email', 'pushed_at'];
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

/** Maps a row of SUMMARY_COLUMNS; the list reads thousands, so it assigns field by field. */
export function toSessionRow(r: Row): SessionRow {
  const row: SessionRow = {
    id: str(r[0]),
    workspaceId: str(r[1]),
    title: str(r[2]),
    status: str(r[3]) as SessionStatus,
    createdAt: str(r[4]),
    updatedAt: str(r[5]),
    model: str(r[6]),
    authorId: str(r[7]),
    authorName: str(r[8]),
    messageCount: num(r[15]),
    transcriptBytes: num(r[18]),
  };
  if (r[9] !== null) row.authorImageUrl = str(r[9]);
  if (r[10] !== null) row.repository = str(r[10]);
  if (r[11] !== null) row.branch = str(r[11]);
  if (r[12] !== null) row.prNumber = num(r[12]);
  if (r[13] !== null) row.prUrl = str(r[13]);
  if (r[14] !== null) row.prStatus = str(r[14]) as NonNullable<SessionRow['prStatus']>;
  if (r[16] !== null) row.firstPreview = str(r[16]);
  if (r[17] !== null) row.lastPreview = str(r[17]);
  if (r[19] !== null) row.agentKind = str(r[19]) as AgentKind;
  if (r[20] !== null) {
    const usage: Usage = {
      inputTokens: num(r[20]),
      outputTokens: num(r[21]),
      cacheReadTokens: num(r[22]),
      cacheWriteTokens: num(r[23]),
    };
    if (r[24] !== null) usage.costUsd = roundDollars(num(r[24]));
    const costUnknown = costUnknownOf(r[32], r[33]);
    if (costUnknown) usage.costUnknown = costUnknown;
    row.usage = usage;
  }
  if (r[25] !== null) row.agentState = str(r[25]) as AgentState;
  if (r[26] !== null) {
    const source: SessionSource = { kind: str(r[26]) as SessionSource['kind'], path: str(r[27]) };
    if (r[28] !== null) source.cwd = str(r[28]);
    if (r[29] !== null) source.conversationId = str(r[29]);
    row.source = source;
  }
  if (r[30] !== null) row.isolation = str(r[30]) as Isolation;
  if (r[31] === 1) row.stopped = true;
  if (r[34] !== null) row.acpAgent = str(r[34]);
  if (r[35] !== null) {
    row.pushedFrom = {
      machine: str(r[35]),
      author: { name: str(r[36]), email: str(r[37]) },
      pushedAt: str(r[38]),
    };
  }
  return row;
}

/** Dollars to a millionth: sums of floating-point costs carry noise past that. */
export function roundDollars(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

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
