import { expect } from 'vitest';
import type { Browse, TestProvider } from './identity-provider.js';

/**
 * A browser's sign-in through the identity provider, step by step over HTTP, as Chromium makes
 * it: Session Desk's start, the provider's login form, and the answer brought back to the
 * callback with the sign-in's cookie.
 */

/** The cookie pair a response set under `name`, or null. */
export function cookieSet(response: Response, name: string): string | null {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0] ?? '';
    if (pair.startsWith(`${name}=`) && pair !== `${name}=`) return pair;
  }
  return null;
}

/** `GET /api/auth/oidc/start`: the sign-in's cookie and where the browser is sent. */
export async function startSignIn(
  serverUrl: string,
  returnTo?: string,
): Promise<{ cookie: string; authorizationUrl: string }> {
  const query = returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`;
  const response = await fetch(`${serverUrl}/api/auth/oidc/start${query}`, { redirect: 'manual' });
  expect(response.status, await response.clone().text()).toBe(303);
  const cookie = cookieSet(response, '__sign_in');
  expect(cookie).not.toBeNull();
  return { cookie: cookie!, authorizationUrl: response.headers.get('location')! };
}

/**
 * The person signs in on the provider's form as `login`: the URL the provider sends the
 * browser back to (our callback, with its code and state).
 */
export async function signInAtProvider(
  idp: TestProvider,
  authorizationUrl: string,
  login: string,
  browse: Browse = idp.browser(),
): Promise<string> {
  const toLogin = await browse(authorizationUrl);
  expect(toLogin.status, toLogin.body).toBe(303);
  const form = await browse(toLogin.location!);
  expect(form.body).toContain('name="login"');
  const submitted = await browse(toLogin.location!, { prompt: 'login', login, password: 'anything' });
  expect(submitted.status, submitted.body).toBe(303);
  // The provider resumes the authorization, then sends the browser back with its answer.
  let next = await browse(submitted.location!);
  while (next.status === 303 && next.location?.startsWith(idp.issuer)) next = await browse(next.location);
  expect(next.status, next.body).toBe(303);
  return next.location!;
}

/** The browser brings the answer back: where it is sent next, and the `__session` it got, if any. */
export async function answerCallback(
  callbackUrl: string,
  cookie: string | null,
): Promise<{ location: string; session: string | null }> {
  const response = await fetch(callbackUrl, {
    redirect: 'manual',
    headers: cookie === null ? {} : { cookie },
  });
  expect(response.status, await response.clone().text()).toBe(303);
  return { location: response.headers.get('location')!, session: cookieSet(response, '__session') };
}

/** The whole sign-in of `login`, from the start to the callback's answer. */
export async function signInThrough(
  serverUrl: string,
  idp: TestProvider,
  login: string,
  returnTo?: string,
): Promise<{ location: string; session: string | null }> {
  const started = await startSignIn(serverUrl, returnTo);
  const callbackUrl = await signInAtProvider(idp, started.authorizationUrl, login);
  return answerCallback(callbackUrl, started.cookie);
}
