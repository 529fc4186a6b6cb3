import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { API_KEY_DISPLAY_CHARS, API_KEY_PREFIX, ID_PREFIXES, type IdKind } from '../../src-shared/ids.js';

/** 128 random bits behind a prefix that says what the id is for. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${randomBytes(16).toString('base64url')}`;
}

/** A sign-in token: 256 random bits. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newApiKey(): { key: string; prefix: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, API_KEY_DISPLAY_CHARS) };
}

/**
 * Tokens and keys carry 256 random bits, so a fast hash is enough to store them; lookups
 * go by hash, and comparing hashes never compares secrets of different lengths.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

// scrypt N=2^17, r=8, p=1 needs 128 MiB; Node's default maxmem (32 MiB) would refuse it.
const SCRYPT = { logN: 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** The last scrypt asked for: each waits for the one before it. */
let lastScrypt: Promise<unknown> = Promise.resolve();

/** Told when a password check's scrypt starts, once its turn came, and when it ends. */
export interface ScryptWatch {
  started(): void;
  ended(): void;
}

/**
 * One scrypt at a time: each holds 128 MiB while it runs, so sign-ins arriving together (a
 * script retrying, several tabs) wait their turn, about a third of a second each, rather than
 * take 128 MiB each at once.
 */
function scryptAsync(
  password: string,
  salt: Buffer,
  options: ScryptOptions,
  watch?: ScryptWatch,
): Promise<Buffer> {
  const run = lastScrypt.then(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        watch?.started();
        scrypt(password, salt, KEY_LENGTH, options, (err, key) => {
          watch?.ended();
          if (err) reject(err);
          else resolve(key);
        });
      }),
  );
  lastScrypt = run.catch(() => undefined);
  return run;
}

function options(logN: number, r: number, p: number): ScryptOptions {
  const N = 2 ** logN;
  return { N, r, p, maxmem: 128 * N * r * 2 };
}

/** `scrypt$logN$r$p$salt$hash`, so stronger parameters can be adopted later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, options(SCRYPT.logN, SCRYPT.r, SCRYPT.p));
  return ['scrypt', SCRYPT.logN, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join(
    '$',
  );
}

/**
 * Checked against when the email is unknown, so that costs one scrypt like a known email: the
 * hash of a random password that was thrown away, with the parameters new hashes get (a test
 * holds them equal). A constant, not made at the first sign-in, which would then run two scrypts.
 */
export const DECOY_HASH =
  'scrypt$17$8$1$OnCln+HWxj6ViCt+fmAvwg==$b67RLUeZ8VH+H2F1yxgBHkM1QpbeYdCP/slvSpmPCNc=';

/**
 * The stored hash of an account without a password (one a sign-in through the identity
 * provider made): no password matches it, until one is set (`sessiondesk user set-password`).
 */
export const NO_PASSWORD = '';

/**
 * Checks a password against a stored hash, or against a decoy when there is no user (or no
 * password), so an unknown email, an account without a password and a wrong password take
 * the same time.
 */
export async function verifyPassword(
  password: string,
  storedHash: string | null,
  watch?: ScryptWatch,
): Promise<boolean> {
  const stored = storedHash === NO_PASSWORD ? null : storedHash;
  const encoded = stored ?? DECOY_HASH;
  const [scheme, logN, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length !== KEY_LENGTH) return false;
  const actual = await scryptAsync(
    password,
    Buffer.from(salt, 'base64'),
    options(Number(logN), Number(r), Number(p)),
    watch,
  );
  return timingSafeEqual(actual, expected) && stored !== null;
}
