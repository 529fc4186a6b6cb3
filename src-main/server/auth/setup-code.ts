import { randomInt } from 'node:crypto';
import { hashSecret } from '../../accounts/secrets.js';

/**
 * On a server with a public URL no secret travels in a URL (a proxy's access log would keep
 * it): instead of the launch token in `?token=`, `serve` prints a setup code on its terminal,
 * which whoever started it types into the dashboard's first-run page. Its 16 characters of
 * Crockford's base32 hold 80 random bits: guessing is hopeless without a limit on tries.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUPS = 4;
const GROUP_LENGTH = 4;

/** How long a code may be used: the first owner is made within the day the server started. */
export const SETUP_CODE_TTL_MS = 24 * 60 * 60_000;

/** A new code, printed as `K7QM-4XPR-9B2D-TW6H`. */
export function newSetupCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/**
 * A code as typed: case, spaces and dashes do not matter, and the letters people read for
 * digits (O, I, L) are those digits, as Crockford's base32 has it.
 */
export function normalizeSetupCode(typed: string): string {
  const plain = typed.toUpperCase().replace(/[\s-]/gu, '').replace(/O/gu, '0').replace(/[IL]/gu, '1');
  if (plain.length !== GROUPS * GROUP_LENGTH) return plain;
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push(plain.slice(g * GROUP_LENGTH, (g + 1) * GROUP_LENGTH));
  return groups.join('-');
}

/**
 * The setup codes every process of a server accepts: a person types the code one process printed
 * and the proxy may hand the request to another. The desktop's one process keeps its own in
 * memory; a team server's are in its database (store-postgres/setup-codes.ts), as hashes.
 */
export interface SetupCodes {
  /** Adds a code; those expired by `now` may be let go. */
  add(codeHash: string, expiresAt: number, now: number): Promise<void>;
  /** Whether a code with this hash was added and has not expired. */
  valid(codeHash: string, now: number): Promise<boolean>;
  remove(codeHash: string): Promise<void>;
}

export function memorySetupCodes(): SetupCodes {
  const codes = new Map<string, number>();
  return {
    add: async (codeHash, expiresAt) => void codes.set(codeHash, expiresAt),
    valid: async (codeHash, now) => (codes.get(codeHash) ?? 0) > now,
    remove: async (codeHash) => void codes.delete(codeHash),
  };
}

export function setupCodeHash(code: string): string {
  return hashSecret(normalizeSetupCode(code));
}
