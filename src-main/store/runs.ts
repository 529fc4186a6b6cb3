import type { SessionStatus } from '../../src-shared/sessions.js';
import type { Db } from './sqljs.js';
import { num, optStr, str } from './row.js';

/** A run waiting for a free place, as kept across restarts. */
export interface QueuedRun {
  sessionId: string;
  /** `start` works on the session's first prompt; `follow-up` on `prompt`. */
  mode: 'start' | 'follow-up';
  /** The prompt to pass (follow-ups joined in order); none for a start on its first message. */
  prompt?: string;
  /** A follow-up to an imported session: its status before, kept if the run never starts. */
  statusBefore?: SessionStatus;
}

/** The process group of a running agent program, and what tells its leader from a later process. */
export interface AgentProcess {
  sessionId: string;
  /** The group's id: its leader's pid. */
  pgid: number;
  /** The leader's start time in clock ticks since boot (/proc/PID/stat, field 22), where known. */
  startTime?: string;
  bootId?: string;
}

/** The queue of runs waiting for a place, and the process groups of runs going on. */
export function createRunsRepository(db: Db) {
  return {
    /** Adds a run at the end of the queue. */
    enqueue(run: QueuedRun): void {
      db.run(
        `INSERT INTO run_queue (session_id, position, mode, prompt, status_before)
         VALUES (?, (SELECT coalesce(max(position), 0) + 1 FROM run_queue), ?, ?, ?)`,
        [run.sessionId, run.mode, run.prompt ?? null, run.statusBefore ?? null],
      );
    },

    /** Changes a queued run's prompt; it keeps its place. */
    setQueuedPrompt(sessionId: string, mode: QueuedRun['mode'], prompt: string): void {
      db.run('UPDATE run_queue SET mode = ?, prompt = ? WHERE session_id = ?', [mode, prompt, sessionId]);
    },

    dequeue(sessionId: string): void {
      db.run('DELETE FROM run_queue WHERE session_id = ?', [sessionId]);
    },

    /** Every queued run, first in line first. */
    queued(): QueuedRun[] {
      return db
        .all('SELECT session_id, mode, prompt, status_before FROM run_queue ORDER BY position')
        .map((r) => {
          const run: QueuedRun = { sessionId: str(r[0]), mode: str(r[1]) as QueuedRun['mode'] };
          const prompt = optStr(r[2]);
          if (prompt !== undefined) run.prompt = prompt;
          const statusBefore = optStr(r[3]);
          if (statusBefore !== undefined) run.statusBefore = statusBefore as SessionStatus;
          return run;
        });
    },

    recordProcess(process: AgentProcess, startedAt: string): void {
      db.run(
        `INSERT OR REPLACE INTO agent_processes (session_id, pgid, start_time, boot_id, started_at)
         VALUES (?, ?, ?, ?, ?)`,
        [process.sessionId, process.pgid, process.startTime ?? null, process.bootId ?? null, startedAt],
      );
    },

    forgetProcess(sessionId: string): void {
      db.run('DELETE FROM agent_processes WHERE session_id = ?', [sessionId]);
    },

    processes(): AgentProcess[] {
      return db.all('SELECT session_id, pgid, start_time, boot_id FROM agent_processes').map((r) => {
        const found: AgentProcess = { sessionId: str(r[0]), pgid: num(r[1]) };
        const startTime = optStr(r[2]);
        const bootId = optStr(r[3]);
        if (startTime !== undefined) found.startTime = startTime;
        if (bootId !== undefined) found.bootId = bootId;
        return found;
      });
    },
  };
}
export type RunsRepository = ReturnType<typeof createRunsRepository>;
