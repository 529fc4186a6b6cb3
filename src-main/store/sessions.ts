import type { Message, SessionStatus, Task, Usage } from '../../src-shared/index.js';
import type { Isolation, SessionSource, SessionSourceFilter } from '../../src-shared/sessions.js';
import type { AgentKind } from '../../src-shared/constants.js';
import { STATS_WINDOW_MS } from '../../src-shared/constants.js';
import { repositoryFilter } from '../../src-shared/repo-url.js';
import { makePreview } from '../../src-shared/text.js';
import type { Db, Params, Row } from './sqljs.js';
import { num, optStr, str } from './row.js';
import { encodeFrame, MAX_MESSAGE_BYTES, TRANSCRIPT_MAGIC } from './transcript-format.js';
import {
  addUnknownCost,
  costUnknownOf,
  unknownCostBetween,
  unpricedModel,
  type PricedRun,
} from './unpriced-runs.js';

/** Every MARK_EVERY-th message's start in the transcript is recorded (transcript_marks). */
export const MARK_EVERY = 64;

/** A message whose JSON is larger than MAX_MESSAGE_BYTES. */
export class MessageTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(
      `The message is ${bytes} bytes as JSON; the largest a session stores is ${MAX_MESSAGE_BYTES} bytes (16 MiB).`,
    );
  }
}

/** Where a session's transcript stands: its messages and committed bytes. */
export interface TranscriptExtent {
  messageCount: number;
  bytes: number;
}

/**
 * Stages messages (their JSON payloads, in order) for a session's transcript inside a
 * write, and records their marks; returns the transcript's new committed length. The
 * caller updates the session's counts.
 */
export function stageMessages(
  db: Db,
  sessionId: string,
  from: TranscriptExtent,
  messages: Array<{ payload: Buffer; createdAtMs: number }>,
): number {
  const pieces: Buffer[] = from.bytes === 0 ? [TRANSCRIPT_MAGIC] : [];
  let offset = from.bytes === 0 ? TRANSCRIPT_MAGIC.length : from.bytes;
  messages.forEach(({ payload, createdAtMs }, i) => {
    const seq = from.messageCount + i + 1;
    if ((seq - 1) % MARK_EVERY === 0) {
      db.run('INSERT INTO transcript_marks (session_id, seq, byte_offset) VALUES (?, ?, ?)', [
        sessionId,
        seq,
        offset,
      ]);
    }
    const frame = encodeFrame(payload, createdAtMs);
    pieces.push(frame);
    offset += frame.length;
  });
  const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
  db.stage({ sessionId, offset: from.bytes, bytes });
  return offset;
}

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
}

export type AgentState = 'queued' | 'running';

/** One run's usage as recorded when it ends. */
export interface RunRecord extends PricedRun {
  conversationId?: string | undefined;
  endedAt: string;
}

/** Adds one run's row to `agent_runs` (what `costPastWeek` sums); inside a store write. */
export function insertRun(db: Db, sessionId: string, workspaceId: string, run: RunRecord): void {
  const { usage } = run;
  db.run(
    `INSERT INTO agent_runs (session_id, workspace_id, kind, conversation_id, ended_at, input_tokens,
       output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, unpriced_model)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      sessionId,
      workspaceId,
      run.kind,
      run.conversationId ?? null,
      run.endedAt,
      usage.inputTokens,
      usage.outputTokens,
      usage.cacheReadTokens,
      usage.cacheWriteTokens,
      usage.costUsd ?? null,
      unpricedModel(run),
    ],
  );
}

export interface NewSession {
  id: string;
  workspaceId: string;
  authorId: string;
  title: string;
  model: string;
  createdAt: string;
  repoUrl?: string;
  repository?: string;
  baseBranch: string;
  initialMessage?: string;
}

export interface ListFilters {
  status?: SessionStatus | undefined;
  repository?: string | undefined;
  authorId?: string | undefined;
  q?: string | undefined;
  agent?: AgentKind | undefined;
  source?: SessionSourceFilter | undefined;
}

/** Position in the list's order (newest `createdAt` first, then `id`). */
export interface ListPosition {
  createdAt: string;
  id: string;
}

const SUMMARY_COLUMNS = `s.id, s.workspace_id, s.title, s.status, s.created_at, s.updated_at, s.model,
  s.author_id, u.name, u.image_url, s.repository, s.branch, s.pr_number, s.pr_url, s.pr_status,
  s.message_count, s.first_preview, s.last_preview, s.transcript_bytes, s.agent_kind, s.usage_input,
  s.usage_output, s.usage_cache_read, s.usage_cache_write, s.usage_cost_usd, s.agent_state, s.source_kind,
  s.source_path, s.source_cwd, s.source_conversation_id, s.isolation, s.stopped, s.usage_unpriced_runs,
  s.usage_unpriced_models, s.acp_agent`;
const SUMMARY_FROM = 'sessions s JOIN users u ON u.id = s.author_id';
/**
 * The same columns for one session. Measured in sql.js, the JOIN made finding one session
 * about three times slower than these subqueries (40 us against 12 us), while for a page
 * of 50 the JOIN is the faster (245 us against 360 us); so each query has its own form.
 */
const ONE_SUMMARY = `SELECT ${SUMMARY_COLUMNS.replace(
  'u.name, u.image_url',
  '(SELECT name FROM users WHERE id = s.author_id), (SELECT image_url FROM users WHERE id = s.author_id)',
)} FROM sessions s WHERE s.id = ?`;

/** Maps a row of SUMMARY_COLUMNS; the list reads thousands, so it assigns field by field. */
function toSessionRow(r: Row): SessionRow {
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
  return row;
}

/** Dollars to a millionth: sums of floating-point costs carry noise past that. */
export function roundDollars(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

/** The text a preview is made from; null when the message has none (tool use only). */
export function messageText(message: Message): string | null {
  let text: string;
  if (message.type === 'user') text = message.message.content;
  else if (message.type === 'result') text = message.result;
  else {
    text = message.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(' ');
  }
  return text.trim() === '' ? null : text;
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
  if (filters.agent) {
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
 * Sessions, their messages and tasks. Every method that writes one calls `db.changed(id)`
 * first, which is how caches of a session's full form (GET one session) learn to drop it.
 */
export function createSessionsRepository(db: Db) {
  /** Keeps workspace_people current: latest session, latest prompt, active sessions. */
  function notePerson(
    workspaceId: string,
    userId: string,
    change: { sessionAt?: string; promptAt?: string; activeDelta?: number },
  ): void {
    db.run(
      `INSERT INTO workspace_people (workspace_id, user_id, last_session_at, last_prompt_at, active_sessions)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET
         last_session_at = max(coalesce(last_session_at, ''), coalesce(excluded.last_session_at, '')),
         last_prompt_at = max(coalesce(last_prompt_at, ''), coalesce(excluded.last_prompt_at, '')),
         active_sessions = active_sessions + excluded.active_sessions`,
      [workspaceId, userId, change.sessionAt ?? null, change.promptAt ?? null, change.activeDelta ?? 0],
    );
  }

  function extent(sessionId: string): TranscriptExtent {
    const row = db.first('SELECT message_count, transcript_bytes FROM sessions WHERE id = ?', [sessionId]);
    return { messageCount: num(row?.[0] ?? 0), bytes: num(row?.[1] ?? 0) };
  }

  function appendMessage(
    sessionId: string,
    workspaceId: string,
    message: Message,
    authorId: string | null,
    at: string,
  ): number {
    const payload = Buffer.from(JSON.stringify(message), 'utf8');
    if (payload.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(payload.length);
    db.changed(sessionId);
    const from = extent(sessionId);
    const seq = from.messageCount + 1;
    const bytes = stageMessages(db, sessionId, from, [{ payload, createdAtMs: Date.parse(at) }]);
    if (authorId !== null) {
      db.run('INSERT INTO prompts (session_id, seq, author_id) VALUES (?, ?, ?)', [sessionId, seq, authorId]);
      notePerson(workspaceId, authorId, { promptAt: at });
    }
    const text = messageText(message);
    const preview = text === null ? null : makePreview(text);
    // A run's result says whether it was stopped; a person's message starts another run.
    const params: Params = [seq, bytes, at, preview, preview];
    let stopped = '';
    if (message.type !== 'assistant') {
      stopped = ', stopped = ?';
      params.push(message.type === 'result' && message.stopped === true ? 1 : null);
    }
    params.push(sessionId);
    db.run(
      `UPDATE sessions SET message_count = ?, transcript_bytes = ?, updated_at = ?,
         first_preview = coalesce(first_preview, ?), last_preview = coalesce(?, last_preview)${stopped}
       WHERE id = ?`,
      params,
    );
    return seq;
  }

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
    insert(session: NewSession): void {
      db.changed(session.id);
      db.run(
        `INSERT INTO sessions (id, workspace_id, author_id, title, status, model, created_at,
           updated_at, repo_url, repository, base_branch, first_message)
         VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)`,
        [
          session.id,
          session.workspaceId,
          session.authorId,
          session.title,
          session.model,
          session.createdAt,
          session.createdAt,
          session.repoUrl ?? null,
          session.repository ?? null,
          session.baseBranch,
          session.initialMessage ?? null,
        ],
      );
      notePerson(session.workspaceId, session.authorId, {
        sessionAt: session.createdAt,
        promptAt: session.createdAt,
        activeDelta: 1,
      });
      if (session.initialMessage !== undefined) {
        const message: Message = { type: 'user', message: { content: session.initialMessage } };
        appendMessage(session.id, session.workspaceId, message, session.authorId, session.createdAt);
      }
    },

    appendMessage,

    update(id: string, changes: { title?: string; status?: SessionStatus }, at: string): void {
      const before = db.first('SELECT workspace_id, author_id, status FROM sessions WHERE id = ?', [id]);
      if (!before) return;
      db.changed(id);
      const wasActive = before[2] === 'active';
      if (changes.status !== undefined && wasActive !== (changes.status === 'active')) {
        notePerson(str(before[0]), str(before[1]), { activeDelta: wasActive ? -1 : 1 });
      }
      // A stop leaves the session completed; marked with another status, it no longer reads as stopped.
      db.run(
        `UPDATE sessions SET title = coalesce(?, title), status = coalesce(?, status), updated_at = ?,
           stopped = CASE WHEN coalesce(?, 'completed') = 'completed' THEN stopped END
         WHERE id = ?`,
        [changes.title ?? null, changes.status ?? null, at, changes.status ?? null, id],
      );
    },

    /** Replaces the task list with the agent's latest one. */
    replaceTasks(sessionId: string, tasks: Task[]): void {
      db.changed(sessionId);
      db.run('DELETE FROM tasks WHERE session_id = ?', [sessionId]);
      tasks.forEach((task, position) => {
        db.run('INSERT INTO tasks (session_id, id, position, title, status) VALUES (?, ?, ?, ?, ?)', [
          sessionId,
          task.id,
          position,
          task.title,
          task.status,
        ]);
      });
    },

    /** Records pull-request facts; `mergedAt` is kept only while the status is `merged`. */
    updatePullRequest(
      sessionId: string,
      pr: { number: number; url: string; status: NonNullable<SessionRow['prStatus']>; mergedAt?: string },
      at: string,
    ): void {
      db.changed(sessionId);
      db.run(
        `UPDATE sessions SET pr_number = ?, pr_url = ?, pr_status = ?,
           pr_merged_at = CASE WHEN ? = 'merged' THEN coalesce(?, pr_merged_at, ?) END, updated_at = ?
         WHERE id = ?`,
        [pr.number, pr.url, pr.status, pr.status, pr.mergedAt ?? null, at, at, sessionId],
      );
    },

    /** When the session's pull request was merged, while it is recorded as merged. */
    pullRequestMergedAt(sessionId: string): string | undefined {
      return optStr(db.first('SELECT pr_merged_at FROM sessions WHERE id = ?', [sessionId])?.[0] ?? null);
    },

    setAgentState(sessionId: string, state: AgentState | null): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET agent_state = ? WHERE id = ?', [state, sessionId]);
    },

    /** The kind of agent running (or that last ran) the session, and how its program is held. */
    setAgentKind(
      sessionId: string,
      kind: AgentKind,
      isolation: Isolation | null = null,
      acpAgent: string | null = null,
    ): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET agent_kind = ?, isolation = ?, acp_agent = ? WHERE id = ?', [
        kind,
        isolation,
        acpAgent,
        sessionId,
      ]);
    },

    /** The agent CLI's own conversation id for the session, with the kind that printed it. */
    conversation(sessionId: string): { kind: AgentKind; id: string } | null {
      const row = db.first('SELECT conversation_kind, conversation_id FROM sessions WHERE id = ?', [
        sessionId,
      ]);
      if (!row || row[0] === null || row[1] === null) return null;
      return { kind: str(row[0]) as AgentKind, id: str(row[1]) };
    },

    setConversation(sessionId: string, kind: AgentKind, id: string): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET conversation_kind = ?, conversation_id = ? WHERE id = ?', [
        kind,
        id,
        sessionId,
      ]);
    },

    /** Records a run's usage and adds it to the session's totals. */
    recordRun(sessionId: string, workspaceId: string, run: RunRecord): void {
      db.changed(sessionId);
      const { usage } = run;
      insertRun(db, sessionId, workspaceId, run);
      // A cost stays absent until some run reports one.
      db.run(
        `UPDATE sessions SET usage_input = coalesce(usage_input, 0) + ?,
           usage_output = coalesce(usage_output, 0) + ?, usage_cache_read = coalesce(usage_cache_read, 0) + ?,
           usage_cache_write = coalesce(usage_cache_write, 0) + ?,
           usage_cost_usd = CASE WHEN ? IS NULL THEN usage_cost_usd ELSE coalesce(usage_cost_usd, 0) + ? END
         WHERE id = ?`,
        [
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadTokens,
          usage.cacheWriteTokens,
          usage.costUsd ?? null,
          usage.costUsd ?? null,
          sessionId,
        ],
      );
      addUnknownCost(db, sessionId, run);
    },

    /** The usage of a session's earlier runs in one conversation (what a resumed CLI counts again). */
    conversationUsage(sessionId: string, conversationId: string): Omit<Usage, 'costUsd'> {
      const row = db.first(
        `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
           coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0)
         FROM agent_runs WHERE session_id = ? AND conversation_id = ?`,
        [sessionId, conversationId],
      );
      return {
        inputTokens: num(row?.[0] ?? 0),
        outputTokens: num(row?.[1] ?? 0),
        cacheReadTokens: num(row?.[2] ?? 0),
        cacheWriteTokens: num(row?.[3] ?? 0),
      };
    },

    agentState(sessionId: string): AgentState | null {
      const row = db.first('SELECT agent_state FROM sessions WHERE id = ?', [sessionId]);
      return row?.[0] ? (str(row[0]) as AgentState) : null;
    },

    /** Sessions an agent was working on, e.g. when the app stopped. */
    runningIds(): string[] {
      return db.all("SELECT id FROM sessions WHERE agent_state = 'running'").map((r) => str(r[0]));
    },

    /** What an agent needs to start: the repository and base branch, and the first prompt. */
    agentInput(sessionId: string): { repoUrl?: string; baseBranch: string; firstMessage?: string } | null {
      const row = db.first('SELECT repo_url, base_branch, first_message FROM sessions WHERE id = ?', [
        sessionId,
      ]);
      if (!row) return null;
      const input: { repoUrl?: string; baseBranch: string; firstMessage?: string } = {
        baseBranch: str(row[1]),
      };
      const repoUrl = optStr(row[0]);
      const firstMessage = optStr(row[2]);
      if (repoUrl !== undefined) input.repoUrl = repoUrl;
      if (firstMessage !== undefined) input.firstMessage = firstMessage;
      return input;
    },

    setBranch(sessionId: string, branch: string, at: string): void {
      db.changed(sessionId);
      db.run('UPDATE sessions SET branch = ?, updated_at = ? WHERE id = ?', [branch, at, sessionId]);
    },

    find(id: string): SessionRow | null {
      const row = db.first(ONE_SUMMARY, [id]);
      return row ? toSessionRow(row) : null;
    },

    extent,

    /**
     * Where message `seq` (from 1) is found: the nearest mark at or before it, from which
     * the transcript is read forward. Null when the session has no such message.
     */
    markAtOrBefore(sessionId: string, seq: number): { seq: number; offset: number } | null {
      const row = db.first(
        `SELECT seq, byte_offset FROM transcript_marks WHERE session_id = ? AND seq <= ?
         ORDER BY seq DESC LIMIT 1`,
        [sessionId, seq],
      );
      return row ? { seq: num(row[0]), offset: num(row[1]) } : null;
    },

    /** The author of each person's message, by its position (from 1). */
    promptAuthors(sessionId: string): Map<number, string> {
      return new Map(
        db
          .all('SELECT seq, author_id FROM prompts WHERE session_id = ?', [sessionId])
          .map((r) => [num(r[0]), str(r[1])]),
      );
    },

    tasks(sessionId: string): Task[] {
      return db
        .all('SELECT id, title, status FROM tasks WHERE session_id = ? ORDER BY position', [sessionId])
        .map((r) => ({ id: str(r[0]), title: str(r[1]), status: str(r[2]) as Task['status'] }));
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
export type SessionsRepository = ReturnType<typeof createSessionsRepository>;
