import type { Message, SessionStatus, Task } from '../../src-shared/index.js';
import { makePreview } from '../../src-shared/text.js';
import type { Db, Params } from './sqljs.js';
import { num, optStr, str } from './row.js';
import { sessionRunMethods } from './session-runs.js';
import { ONE_SUMMARY, sessionListMethods } from './session-listing.js';
import { messageText, toSessionRow, type SessionRow } from './session-row.js';
import { MessageTooLargeError } from './errors.js';
import {
  frameMessages,
  MAX_MESSAGE_BYTES,
  messagePayload,
  type TranscriptExtent,
} from './transcript-format.js';

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
  const framed = frameMessages(from, messages);
  for (const mark of framed.marks) {
    db.run('INSERT INTO transcript_marks (session_id, seq, byte_offset) VALUES (?, ?, ?)', [
      sessionId,
      mark.seq,
      mark.offset,
    ]);
  }
  db.stage({ sessionId, offset: from.bytes, bytes: framed.bytes });
  return framed.end;
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
    payload = messagePayload(message),
  ): number {
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

    /**
     * Title and status. A stop leaves the session completed and marked `stopped`; another status
     * takes the mark away, and so does any status set through the API (`requested`, a PATCH):
     * marked completed by someone, a stopped session reads as completed.
     */
    update(
      id: string,
      changes: { title?: string; status?: SessionStatus },
      at: string,
      options: { requested?: boolean } = {},
    ): void {
      const before = db.first('SELECT workspace_id, author_id, status FROM sessions WHERE id = ?', [id]);
      if (!before) return;
      db.changed(id);
      const wasActive = before[2] === 'active';
      if (changes.status !== undefined && wasActive !== (changes.status === 'active')) {
        notePerson(str(before[0]), str(before[1]), { activeDelta: wasActive ? -1 : 1 });
      }
      const keepsStop =
        changes.status === undefined || (changes.status === 'completed' && !options.requested);
      db.run(
        `UPDATE sessions SET title = coalesce(?, title), status = coalesce(?, status), updated_at = ?,
           stopped = CASE WHEN ? THEN stopped END
         WHERE id = ?`,
        [changes.title ?? null, changes.status ?? null, at, keepsStop ? 1 : 0, id],
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

    ...sessionRunMethods(db),
    ...sessionListMethods(db),

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
  };
}
export type SessionsRepository = ReturnType<typeof createSessionsRepository>;
