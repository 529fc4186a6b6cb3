import type { Repos } from '../store/storage.js';
import type { Queryable } from './rows.js';

/**
 * Where pushed sessions came from, on PostgreSQL: the same rule as the sql.js repository
 * (`store/session-origins.ts`), the first push keeping its time and every push updating where
 * from and when.
 */
export function postgresSessionOrigins(sql: Queryable): Repos['sessionOrigins'] {
  return {
    async record(sessionId, origin) {
      await sql`INSERT INTO session_origins (session_id, machine, author_name, author_email, first_pushed_at,
          pushed_at, folder)
        VALUES (${sessionId}, ${origin.machine}, ${origin.authorName}, ${origin.authorEmail}, ${origin.pushedAt},
          ${origin.pushedAt}, ${origin.folder ?? null})
        ON CONFLICT (session_id) DO UPDATE SET machine = excluded.machine, author_name = excluded.author_name,
          author_email = excluded.author_email, pushed_at = excluded.pushed_at, folder = excluded.folder`;
    },
  };
}
