import { str } from './row.js';
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

/** Who first pushed a session: the key, and the person who made it (null: the administrator). */
export interface SessionPusher {
  keyId: string | null;
  userId: string | null;
}

export function createSessionOriginsRepository(db: Db) {
  return {
    /**
     * Records a push. The first says where the session came from and who pushed it, once and
     * for all (the folder it ran in too, unless a push of an earlier version left none); every
     * later one only when it was pushed.
     */
    record(sessionId: string, origin: SessionOrigin, pusher: SessionPusher): void {
      db.run(
        `INSERT INTO session_origins (session_id, machine, author_name, author_email, first_pushed_at, pushed_at,
           pushed_by_key, pushed_by_user, folder)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET pushed_at = excluded.pushed_at,
           folder = coalesce(session_origins.folder, excluded.folder)`,
        [
          sessionId,
          origin.machine,
          origin.authorName,
          origin.authorEmail,
          origin.pushedAt,
          origin.pushedAt,
          pusher.keyId,
          pusher.userId,
          origin.folder ?? null,
        ],
      );
      db.changed(sessionId);
    },

    /** Who first pushed the session; null when it was not pushed. */
    pusher(sessionId: string): SessionPusher | null {
      const row = db.first('SELECT pushed_by_key, pushed_by_user FROM session_origins WHERE session_id = ?', [
        sessionId,
      ]);
      if (!row) return null;
      return { keyId: row[0] === null ? null : str(row[0]), userId: row[1] === null ? null : str(row[1]) };
    },
  };
}
