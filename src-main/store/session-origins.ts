import type { Db } from './sqljs.js';

/** Where a pushed session came from; a session without one was run (or imported) on this server. */
export interface SessionOrigin {
  machine: string;
  authorName: string;
  authorEmail: string;
  pushedAt: string;
  /** The folder it ran in on the desktop, when the desktop said. */
  folder?: string | undefined;
}

export function createSessionOriginsRepository(db: Db) {
  return {
    /** Records a push: the first keeps its time, every one updates where from and when. */
    record(sessionId: string, origin: SessionOrigin): void {
      db.run(
        `INSERT INTO session_origins (session_id, machine, author_name, author_email, first_pushed_at, pushed_at, folder)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET machine = excluded.machine,
           author_name = excluded.author_name, author_email = excluded.author_email,
           pushed_at = excluded.pushed_at, folder = excluded.folder`,
        [
          sessionId,
          origin.machine,
          origin.authorName,
          origin.authorEmail,
          origin.pushedAt,
          origin.pushedAt,
          origin.folder ?? null,
        ],
      );
      db.changed(sessionId);
    },
  };
}
