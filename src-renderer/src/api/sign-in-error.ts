import { SIGN_IN_ERROR_PARAM } from '../../../src-shared/sign-in';

/**
 * A sign-in through the identity provider that was refused comes back to the dashboard with
 * `?signInError=CODE`. The code is read once and taken out of the address bar, so that a
 * reload or a copied link does not say it again.
 */
export function takeSignInError(): string | null {
  const url = new URL(window.location.href);
  const code = url.searchParams.get(SIGN_IN_ERROR_PARAM);
  if (code === null) return null;
  url.searchParams.delete(SIGN_IN_ERROR_PARAM);
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return code;
}
