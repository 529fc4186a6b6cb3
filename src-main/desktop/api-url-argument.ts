/**
 * How the preload learns the API's base URL: the main process passes it as one extra
 * argument of the renderer process (webPreferences.additionalArguments). No imports: this
 * file is bundled into the sandboxed preload, which cannot load Node modules.
 */
const PREFIX = '--sessiondesk-api-url=';

/** Only a plain-HTTP loopback origin is accepted, so the argument cannot point elsewhere. */
const LOOPBACK_ORIGIN = /^http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost)(?::\d{1,5})?$/u;

export function apiUrlArgument(apiUrl: string): string {
  const origin = new URL(apiUrl).origin;
  if (!LOOPBACK_ORIGIN.test(origin)) throw new Error(`not a loopback API URL: ${apiUrl}`);
  return `${PREFIX}${origin}`;
}

export function apiUrlFromArgv(argv: readonly string[]): string | null {
  for (const arg of argv) {
    if (!arg.startsWith(PREFIX)) continue;
    const value = arg.slice(PREFIX.length);
    return LOOPBACK_ORIGIN.test(value) ? value : null;
  }
  return null;
}
