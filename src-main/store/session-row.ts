import type { AgentKind } from '../../src-shared/constants.js';
import type { Message, SessionStatus, Usage } from '../../src-shared/index.js';
import type { Isolation, PushedFrom, SessionSource } from '../../src-shared/sessions.js';
import { num, str } from './row.js';
import { costUnknownOf } from './cost-unknown.js';
import type { AgentState } from './session-runs.js';
import type { Row } from './sqljs.js';

/*
 * A session's row as either database answers it: the columns a summary reads, in SQL both
 * sql.js and PostgreSQL speak (`stopped` read as 1 or NULL), and the record made of them.
 * Nothing here touches a database.
 */

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

/** A run waiting for someone to decide what its agent asked shows so (the request is the truth). */
const AGENT_STATE = `CASE WHEN s.agent_state = 'running' AND EXISTS (SELECT 1 FROM approvals a
  WHERE a.session_id = s.id AND a.decided_at IS NULL) THEN 'needs_input' ELSE s.agent_state END`;
export const SUMMARY_COLUMNS = `s.id, s.workspace_id, s.title, s.status, s.created_at, s.updated_at, s.model,
  s.author_id, u.name, u.image_url, s.repository, s.branch, s.pr_number, s.pr_url, s.pr_status,
  s.message_count, s.first_preview, s.last_preview, s.transcript_bytes, s.agent_kind, s.usage_input,
  s.usage_output, s.usage_cache_read, s.usage_cache_write, s.usage_cost_usd, ${AGENT_STATE}, s.source_kind,
  s.source_path, s.source_cwd, s.source_conversation_id, s.isolation, CASE WHEN s.stopped THEN 1 END, s.usage_unpriced_runs,
  s.usage_unpriced_models, s.acp_agent, o.machine, o.author_name, o.author_email, o.pushed_at, o.folder`;
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
    if (r[39] !== null && r[39] !== undefined) row.pushedFrom.folder = str(r[39]);
  }
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
