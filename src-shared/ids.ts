/**
 * Identifiers are a short prefix (what kind of thing) plus 128 random bits in base64url.
 * The patterns let the server refuse a malformed id before it reaches the database.
 */
export const ID_PREFIXES = {
  session: 'ses',
  workspace: 'org',
  user: 'usr',
  apiKey: 'key',
  approval: 'apr',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIXES[kind]}_[A-Za-z0-9_-]{22}$`, 'u');
}

export function isId(kind: IdKind, value: string): boolean {
  return idPattern(kind).test(value);
}

/** API keys: `sdk_` and 256 random bits. The first characters are kept as a display prefix. */
export const API_KEY_PREFIX = 'sdk_';
export const API_KEY_PATTERN = /^sdk_[A-Za-z0-9_-]{43}$/u;
export const API_KEY_DISPLAY_CHARS = 12;
