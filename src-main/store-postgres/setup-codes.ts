import type { Sql } from 'postgres';

/**
 * A team server's setup codes (server/auth/setup-code.ts) in `setup_codes`, so that the code one
 * process printed is accepted by whichever process the proxy hands the request to. Only hashes
 * are kept; codes that expired are deleted as new ones are added.
 */
export function postgresSetupCodes(sql: Sql) {
  return {
    async add(codeHash: string, expiresAt: number, now: number): Promise<void> {
      await sql`DELETE FROM setup_codes WHERE expires_at <= ${now}::bigint`;
      await sql`INSERT INTO setup_codes (code_hash, expires_at) VALUES (${codeHash}, ${expiresAt}::bigint)
        ON CONFLICT (code_hash) DO UPDATE SET expires_at = excluded.expires_at`;
    },
    async valid(codeHash: string, now: number): Promise<boolean> {
      const rows =
        await sql`SELECT 1 FROM setup_codes WHERE code_hash = ${codeHash} AND expires_at > ${now}::bigint`;
      return rows.length > 0;
    },
    async remove(codeHash: string): Promise<void> {
      await sql`DELETE FROM setup_codes WHERE code_hash = ${codeHash}`;
    },
  };
}
