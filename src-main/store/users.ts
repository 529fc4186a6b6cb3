import type { Db } from './sqljs.js';
import { optStr, str } from './row.js';

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  imageUrl?: string;
  passwordHash: string;
  createdAt: string;
}

const COLUMNS = 'id, email, name, image_url, password_hash, created_at';

function toUser(row: unknown[]): UserRecord {
  const [id, email, name, imageUrl, passwordHash, createdAt] = row as Parameters<typeof str>[0][];
  const user: UserRecord = {
    id: str(id),
    email: str(email),
    name: str(name),
    passwordHash: str(passwordHash),
    createdAt: str(createdAt),
  };
  const image = optStr(imageUrl);
  if (image !== undefined) user.imageUrl = image;
  return user;
}

export function createUsersRepository(db: Db) {
  return {
    insert(user: UserRecord): void {
      db.run(`INSERT INTO users (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, [
        user.id,
        user.email,
        user.name,
        user.imageUrl ?? null,
        user.passwordHash,
        user.createdAt,
      ]);
    },
    findById(id: string): UserRecord | null {
      const row = db.first(`SELECT ${COLUMNS} FROM users WHERE id = ?`, [id]);
      return row ? toUser(row) : null;
    },
    /** Emails are stored lower-cased, so this lookup is case-insensitive. */
    findByEmail(email: string): UserRecord | null {
      const row = db.first(`SELECT ${COLUMNS} FROM users WHERE email = ?`, [email.toLowerCase()]);
      return row ? toUser(row) : null;
    },
    setPasswordHash(id: string, passwordHash: string): void {
      db.run('UPDATE users SET password_hash = ? WHERE id = ?', [passwordHash, id]);
    },
    /** The account created first among those whose email is not in `except`, or null. */
    firstCreated(except: readonly string[]): UserRecord | null {
      const row = db.first(
        `SELECT ${COLUMNS} FROM users WHERE email NOT IN (${except.map(() => '?').join(', ') || "''"})
         ORDER BY created_at, rowid LIMIT 1`,
        [...except],
      );
      return row ? toUser(row) : null;
    },
    count(): number {
      return Number(db.first('SELECT count(*) FROM users')?.[0] ?? 0);
    },
  };
}
export type UsersRepository = ReturnType<typeof createUsersRepository>;
