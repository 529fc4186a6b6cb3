import { z } from 'zod';
import { api } from './client';

/**
 * The URL `serve` printed (and the desktop window's) carries the launch token, as Jupyter's
 * does. It is traded once for a cookie of this browser session, which first-run setup and
 * the demo's sign-in need, and taken out of the address bar and history before anything
 * else runs, so it is neither shared with a copied link nor kept.
 *
 * Resolves to whether a token was refused (a link from an earlier start of the server).
 */
export async function presentLaunchToken(): Promise<{ refused: boolean }> {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('token');
  if (token === null) return { refused: false };
  url.searchParams.delete('token');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  try {
    await api.post('/api/auth/launch', z.null(), { token });
    return { refused: false };
  } catch {
    return { refused: true };
  }
}
