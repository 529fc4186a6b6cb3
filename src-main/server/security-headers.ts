/**
 * The dashboard's Content Security Policy: only our own scripts, styles and API; avatars
 * may come from any https host. The desktop shell applies the same policy.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Query parameters whose values never reach a log line: API keys, the launch token of the URL
 * `serve` prints, and the identity provider's answer (its code and state).
 */
const SECRET_PARAMS = new Set(['apikey', 'token', 'code', 'state']);

/** The URL with secret query values replaced, for logs. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/gu, ' '));
      } catch {
        name = rawName;
      }
      // Near misses too (`apiKey[]`, `api_key`): the value is still the key, and is logged as sent.
      const plain = name.toLowerCase().replace(/[^a-z0-9]/gu, '');
      return [...SECRET_PARAMS].some((secret) => plain.startsWith(secret)) ? `${rawName}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}
