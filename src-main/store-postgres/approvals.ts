import type { ApprovalRecord } from '../store/approvals.js';
import type { Repos } from '../store/storage.js';
import { optText, text, type Queryable, type Row } from './rows.js';

function toApproval(r: Row): ApprovalRecord {
  const approval: ApprovalRecord = {
    id: text(r.id),
    workspaceId: text(r.workspace_id),
    sessionId: text(r.session_id),
    agent: text(r.agent),
    createdAt: text(r.created_at),
    expiresAt: text(r.expires_at),
    title: text(r.title),
    tool: JSON.parse(text(r.tool)) as ApprovalRecord['tool'],
    options: JSON.parse(text(r.options)) as ApprovalRecord['options'],
  };
  const detail = optText(r.detail);
  if (detail !== undefined) approval.detail = detail;
  const decidedAt = optText(r.decided_at);
  if (decidedAt !== undefined) {
    approval.decidedAt = decidedAt;
    approval.decision = text(r.decision) as ApprovalRecord['decision'];
    const optionId = optText(r.option_id);
    const message = optText(r.message);
    if (optionId !== undefined) approval.optionId = optionId;
    if (message !== undefined) approval.message = message;
    approval.decidedBy = JSON.parse(text(r.decided_by)) as ApprovalRecord['decidedBy'];
  }
  return approval;
}

/**
 * What agents asked before they acted, on PostgreSQL: the same methods, answers and rules as
 * the sql.js repository (`store/approvals.ts`). Where sql.js breaks a tie of `created_at` by
 * insertion order (`rowid`, which a request saved again over itself takes anew), PostgreSQL has
 * none: ties go by id until the schema keeps an insertion sequence.
 */
export function postgresApprovals(sql: Queryable): Repos['approvals'] {
  return {
    async save(approval) {
      await sql`INSERT INTO approvals (id, workspace_id, session_id, agent, created_at, expires_at, title,
          tool, options, decided_at, decision, option_id, message, decided_by, detail)
        VALUES (${approval.id}, ${approval.workspaceId}, ${approval.sessionId}, ${approval.agent},
          ${approval.createdAt}, ${approval.expiresAt}, ${approval.title}, ${JSON.stringify(approval.tool)},
          ${JSON.stringify(approval.options)}, ${approval.decidedAt ?? null}, ${approval.decision ?? null},
          ${approval.optionId ?? null}, ${approval.message ?? null},
          ${approval.decidedBy === undefined ? null : JSON.stringify(approval.decidedBy)}, ${approval.detail ?? null})
        ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id, session_id = excluded.session_id,
          agent = excluded.agent, created_at = excluded.created_at, expires_at = excluded.expires_at,
          title = excluded.title, tool = excluded.tool, options = excluded.options,
          decided_at = excluded.decided_at, decision = excluded.decision, option_id = excluded.option_id,
          message = excluded.message, decided_by = excluded.decided_by, detail = excluded.detail`;
    },
    async find(id) {
      const [row] = await sql<Row[]>`SELECT * FROM approvals WHERE id = ${id}`;
      return row ? toApproval(row) : null;
    },
    async pending(workspaceId, sessionId) {
      const ofSession = sessionId === undefined ? sql`` : sql`AND session_id = ${sessionId}`;
      const rows = await sql<Row[]>`SELECT * FROM approvals WHERE workspace_id = ${workspaceId}
        AND decided_at IS NULL ${ofSession} ORDER BY created_at, made_order`;
      return rows.map(toApproval);
    },
    async ofSession(sessionId) {
      const rows = await sql<Row[]>`SELECT * FROM approvals WHERE session_id = ${sessionId}
        ORDER BY created_at, made_order`;
      return rows.map(toApproval);
    },
    async recent(workspaceId, limit) {
      const rows = await sql<Row[]>`SELECT * FROM approvals WHERE workspace_id = ${workspaceId}
        ORDER BY created_at DESC, made_order DESC LIMIT ${limit}`;
      return rows.map(toApproval);
    },
    async allPending() {
      const rows = await sql<
        Row[]
      >`SELECT * FROM approvals WHERE decided_at IS NULL ORDER BY created_at, made_order`;
      return rows.map(toApproval);
    },
    // The session is sql.js's key for dropping cached reads of it; nothing here caches them.
    async decide(id, _sessionId, outcome) {
      const done = await sql`UPDATE approvals SET decided_at = ${outcome.decidedAt},
          decision = ${outcome.decision}, option_id = ${outcome.optionId ?? null},
          message = ${outcome.message ?? null}, decided_by = ${JSON.stringify(outcome.decidedBy)}
        WHERE id = ${id} AND decided_at IS NULL`;
      return done.count > 0;
    },
  };
}
