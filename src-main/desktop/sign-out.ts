import { SESSION_COOKIE } from '../../src-shared/constants.js';

/**
 * Ends a dashboard sign-in on the server (the menu's Sign Out): the same request the
 * dashboard's own button sends, with the window's cookie and the server's own Origin.
 * Clearing the cookie alone would leave the token valid until it expires.
 */
export async function endSignIn(apiUrl: string, token: string): Promise<void> {
  const origin = new URL(apiUrl).origin;
  const response = await fetch(`${origin}/api/auth/sign-out`, {
    method: 'POST',
    headers: { cookie: `${SESSION_COOKIE}=${token}`, origin },
  });
  await response.arrayBuffer();
  if (response.status !== 204) throw new Error(`The server refused to sign out (${response.status}).`);
}
