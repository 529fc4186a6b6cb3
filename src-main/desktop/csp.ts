import { CONTENT_SECURITY_POLICY } from '../server/security-headers.js';

/** A policy as directive name → sources, in the order written. */
export type Policy = Map<string, string[]>;

export function parsePolicy(policy: string): Policy {
  const parsed: Policy = new Map();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/u);
    if (name) parsed.set(name.toLowerCase(), sources);
  }
  return parsed;
}

export function serializePolicy(policy: Policy): string {
  return [...policy].map(([name, sources]) => [name, ...sources].join(' ')).join('; ');
}

function addSources(policy: Policy, directive: string, ...sources: string[]): void {
  const current = policy.get(directive) ?? policy.get('default-src') ?? [];
  policy.set(directive, [...current, ...sources.filter((s) => !current.includes(s))]);
}

/**
 * The policy the window enforces: the server's own (CONTENT_SECURITY_POLICY, the one sent
 * with the dashboard's HTML), so the desktop and a browser run the dashboard under the same
 * rules. Under `npm run dev` only, the Vite dev server's page needs its inline hot-reload
 * preamble, injected styles and its WebSocket; the built app never gets those exceptions.
 */
export function windowContentSecurityPolicy(devServerOrigin: string | null = null): string {
  if (devServerOrigin === null) return CONTENT_SECURITY_POLICY;
  const policy = parsePolicy(CONTENT_SECURITY_POLICY);
  addSources(policy, 'script-src', "'unsafe-inline'");
  addSources(policy, 'style-src', "'unsafe-inline'");
  addSources(policy, 'connect-src', devServerOrigin.replace(/^http/u, 'ws'));
  return serializePolicy(policy);
}

/**
 * Response headers with the window's policy as the only Content-Security-Policy (any
 * casing of the server's own is replaced, so exactly one policy applies).
 */
export function withContentSecurityPolicy(
  headers: Record<string, string[] | string> | undefined,
  policy: string,
): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-security-policy') continue;
    result[name] = Array.isArray(value) ? value : [value];
  }
  result['Content-Security-Policy'] = [policy];
  return result;
}
