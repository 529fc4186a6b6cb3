import type { Repos } from '../store/storage.js';
import type { Queryable } from './rows.js';

/**
 * Where pushed sessions came from, on PostgreSQL: the same rule as the sql.js repository
 * (`store/session-origins.ts`), the first push saying where from and by whom, once, and every
 * push when.
 */
export function postgresSessionOrigins(sql: Queryable): Repos['sessionOrigins'] {
  return {
    async record(sessionId, origin, pusher) {
      await sql`INSERT INTO session_origins (session_id, machine, author_name, author_email, first_pushed_at,
          pushed_at, pushed_by_key, pushed_by_user, folder)
        VALUES (${sessionId}, ${origin.machine}, ${origin.authorName}, ${origin.authorEmail}, ${origin.pushedAt},
          ${origin.pushedAt}, ${pusher.keyId}, ${pusher.userId}, ${origin.folder ?? null})
        ON CONFLICT (session_id) DO UPDATE SET pushed_at = excluded.pushed_at,
          folder = coalesce(session_origins.folder, excluded.folder)`;
    },

    async pusher(sessionId) {
      const [row] = await sql<{ keyId: string | null; userId: string | null }[]>`
        SELECT pushed_by_key AS "keyId", pushed_by_user AS "userId" FROM session_origins
        WHERE session_id = ${sessionId}`;
      return row ? { keyId: row.keyId, userId: row.userId } : null;
    },
  };
}
