import type {
  Approval,
  ApprovalDecidedBy,
  ApprovalDecision,
  ApprovalOption,
  ApprovalTool,
} from '../../src-shared/approvals.js';
import type { Db, SqlValue } from './sqljs.js';
import { optStr, str } from './row.js';

/** A request as stored, with the workspace it belongs to. */
export type ApprovalRecord = Approval & { workspaceId: string };

export interface ApprovalOutcome {
  decidedAt: string;
  decision: ApprovalDecision;
  decidedBy: ApprovalDecidedBy;
  optionId?: string;
  message?: string;
}

const COLUMNS = `id, workspace_id, session_id, agent, created_at, expires_at, title, tool, options,
  decided_at, decision, option_id, message, decided_by, detail`;

function toApproval(r: SqlValue[]): ApprovalRecord {
  const approval: ApprovalRecord = {
    id: str(r[0]),
    workspaceId: str(r[1]),
    sessionId: str(r[2]),
    agent: str(r[3]),
    createdAt: str(r[4]),
    expiresAt: str(r[5]),
    title: str(r[6]),
    tool: JSON.parse(str(r[7])) as ApprovalTool,
    options: JSON.parse(str(r[8])) as ApprovalOption[],
  };
  const detail = optStr(r[14]);
  if (detail !== undefined) approval.detail = detail;
  const decidedAt = optStr(r[9]);
  if (decidedAt !== undefined) {
    approval.decidedAt = decidedAt;
    approval.decision = str(r[10]) as ApprovalDecision;
    const optionId = optStr(r[11]);
    const message = optStr(r[12]);
    if (optionId !== undefined) approval.optionId = optionId;
    if (message !== undefined) approval.message = message;
    approval.decidedBy = JSON.parse(str(r[13])) as ApprovalDecidedBy;
  }
  return approval;
}

/** What agents asked before they acted: pending while `decided_at` is null. */
export function createApprovalsRepository(db: Db) {
  return {
    /**
     * Writes a request: a new one, pending, or one as an export had it, decided or not
     * (replacing one of the same id, as an import that completes a session does).
     */
    save(approval: ApprovalRecord): void {
      db.changed(approval.sessionId);
      db.run(
        `INSERT OR REPLACE INTO approvals (id, workspace_id, session_id, agent, created_at, expires_at, title,
           tool, options, decided_at, decision, option_id, message, decided_by, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          approval.id,
          approval.workspaceId,
          approval.sessionId,
          approval.agent,
          approval.createdAt,
          approval.expiresAt,
          approval.title,
          JSON.stringify(approval.tool),
          JSON.stringify(approval.options),
          approval.decidedAt ?? null,
          approval.decision ?? null,
          approval.optionId ?? null,
          approval.message ?? null,
          approval.decidedBy === undefined ? null : JSON.stringify(approval.decidedBy),
          approval.detail ?? null,
        ],
      );
    },
    find(id: string): ApprovalRecord | null {
      const row = db.first(`SELECT ${COLUMNS} FROM approvals WHERE id = ?`, [id]);
      return row ? toApproval(row) : null;
    },
    /** Pending requests of a workspace (or of one session of it), oldest first. */
    pending(workspaceId: string, sessionId?: string): ApprovalRecord[] {
      return db
        .all(
          `SELECT ${COLUMNS} FROM approvals WHERE workspace_id = ? AND decided_at IS NULL
           ${sessionId === undefined ? '' : 'AND session_id = ?'} ORDER BY created_at, rowid`,
          sessionId === undefined ? [workspaceId] : [workspaceId, sessionId],
        )
        .map(toApproval);
    },
    /** Every request a session's agents made, decided or not, in order (its record). */
    ofSession(sessionId: string): ApprovalRecord[] {
      return db
        .all(`SELECT ${COLUMNS} FROM approvals WHERE session_id = ? ORDER BY created_at, rowid`, [sessionId])
        .map(toApproval);
    },
    /** A workspace's latest requests, decided or not, the latest first. */
    recent(workspaceId: string, limit: number): ApprovalRecord[] {
      return db
        .all(
          `SELECT ${COLUMNS} FROM approvals WHERE workspace_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
          [workspaceId, limit],
        )
        .map(toApproval);
    },
    /** Every pending request, of any workspace: at start, those of runs that died with the server. */
    allPending(): ApprovalRecord[] {
      return db
        .all(`SELECT ${COLUMNS} FROM approvals WHERE decided_at IS NULL ORDER BY created_at, rowid`)
        .map(toApproval);
    },
    /** Records the decision; false when the request was decided already (or is not there). */
    decide(id: string, sessionId: string, outcome: ApprovalOutcome): boolean {
      db.changed(sessionId);
      return (
        db.run(
          `UPDATE approvals SET decided_at = ?, decision = ?, option_id = ?, message = ?, decided_by = ?
           WHERE id = ? AND decided_at IS NULL`,
          [
            outcome.decidedAt,
            outcome.decision,
            outcome.optionId ?? null,
            outcome.message ?? null,
            JSON.stringify(outcome.decidedBy),
            id,
          ],
        ) > 0
      );
    },
  };
}
export type ApprovalsRepository = ReturnType<typeof createApprovalsRepository>;
