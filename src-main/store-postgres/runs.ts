import type { SessionStatus } from '../../src-shared/sessions.js';
import type { AgentProcess, QueuedRun } from '../store/runs.js';
import type { Repos } from '../store/storage.js';
import { optText, send, text, type Queryable, type Row } from './rows.js';

/**
 * The run queue and the process groups of runs going on, on PostgreSQL: the same methods,
 * answers and rules as the sql.js repository (`store/runs.ts`).
 */
export function postgresRuns(sql: Queryable): Repos['runs'] {
  return {
    async enqueue(run) {
      await send(
        sql,
        sql`INSERT INTO run_queue (session_id, position, mode, prompt, status_before)
        SELECT ${run.sessionId}, coalesce(max(position), 0) + 1, ${run.mode}, ${run.prompt ?? null},
          ${run.statusBefore ?? null}
        FROM run_queue`,
      );
    },
    async setQueuedPrompt(sessionId, mode, prompt) {
      await send(
        sql,
        sql`UPDATE run_queue SET mode = ${mode}, prompt = ${prompt} WHERE session_id = ${sessionId}`,
      );
    },
    async dequeue(sessionId) {
      await send(sql, sql`DELETE FROM run_queue WHERE session_id = ${sessionId}`);
    },
    async queued() {
      // sql.js runs one write at a time, so positions never repeat there. Two transactions
      // enqueuing at once here can both take the same next position: neither came first, and
      // the session id keeps their order the same on every read.
      const rows = await sql<Row[]>`SELECT session_id, mode, prompt, status_before FROM run_queue
        ORDER BY position, session_id COLLATE "C"`;
      return rows.map((r) => {
        const run: QueuedRun = { sessionId: text(r.session_id), mode: text(r.mode) as QueuedRun['mode'] };
        const prompt = optText(r.prompt);
        if (prompt !== undefined) run.prompt = prompt;
        const statusBefore = optText(r.status_before);
        if (statusBefore !== undefined) run.statusBefore = statusBefore as SessionStatus;
        return run;
      });
    },
    async recordProcess(process, startedAt) {
      await send(
        sql,
        sql`INSERT INTO agent_processes (session_id, pgid, start_time, boot_id, started_at)
        VALUES (${process.sessionId}, ${process.pgid}, ${process.startTime ?? null}, ${process.bootId ?? null},
          ${startedAt})
        ON CONFLICT (session_id) DO UPDATE SET pgid = excluded.pgid, start_time = excluded.start_time,
          boot_id = excluded.boot_id, started_at = excluded.started_at`,
      );
    },
    async forgetProcess(sessionId) {
      await send(sql, sql`DELETE FROM agent_processes WHERE session_id = ${sessionId}`);
    },
    async processes() {
      // No order is promised (a start after a crash ends every group); by session, so that
      // two reads agree.
      const rows = await sql<Row[]>`SELECT session_id, pgid, start_time, boot_id FROM agent_processes
        ORDER BY session_id COLLATE "C"`;
      return rows.map((r) => {
        const found: AgentProcess = { sessionId: text(r.session_id), pgid: Number(r.pgid) };
        const startTime = optText(r.start_time);
        const bootId = optText(r.boot_id);
        if (startTime !== undefined) found.startTime = startTime;
        if (bootId !== undefined) found.bootId = bootId;
        return found;
      });
    },
  };
}
