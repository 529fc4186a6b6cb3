import { AppError } from '../../errors.js';
import { clientKey, type FailureLimit, type FailureLimiter, type Remembered } from './rate-limit.js';

/**
 * Failed sign-ins, counted so that no one can turn the limit against an account's owner: a
 * client's failures refuse that client, never the account as a whole.
 *
 * - One client on one account: 5 failures in 15 minutes refuse that client on that account.
 * - One client on every account: 30 failures in 15 minutes refuse that client everywhere. Not
 *   for this machine's own address (loopback): on the desktop, and behind a tunnel, every
 *   person is that one client, and a limit on it would lock everyone out; there the limit per
 *   account (the first rule, loopback being one client) holds.
 * - Every client on one account: past 20 failures in 15 minutes, the account takes sign-ins
 *   only from the clients it signed in from in the last 30 days, so that many addresses cannot
 *   guess on and on; its owner, where they signed in before, is never refused by it.
 *
 * A right password ends its client's count on that account and makes the client known to it.
 */
export const SIGN_IN_LIMITS = {
  clientOnAccount: { max: 5, windowMs: 15 * 60_000 },
  client: { max: 30, windowMs: 15 * 60_000 },
  account: { max: 20, windowMs: 15 * 60_000 },
} as const satisfies Record<string, FailureLimit>;
/** How long a client an account signed in from stays known to it. */
export const KNOWN_CLIENT_MS = 30 * 24 * 60 * 60_000;

/** Where each count and the known clients are kept: in memory, or the team database. */
export interface SignInCounts {
  clientOnAccount: FailureLimiter;
  client: FailureLimiter;
  account: FailureLimiter;
  known: Remembered;
}

/** Which rule refused a sign-in, for the log. */
export type SignInLimit = 'client-on-account' | 'client' | 'account';

export interface SignInThrottle {
  /** Null when this client may try this account now; else the rule and the seconds to wait. */
  refusal(email: string, ip: string): Promise<{ limit: SignInLimit; wait: number } | null>;
  failed(email: string, ip: string): Promise<void>;
  succeeded(email: string, ip: string): Promise<void>;
}

export function createSignInThrottle(counts: SignInCounts): SignInThrottle {
  const keys = (email: string, ip: string) => {
    const client = clientKey(ip);
    return { client, pair: `${email}\n${client}`, loopback: client === 'loopback' };
  };
  return {
    async refusal(email, ip) {
      const { client, pair, loopback } = keys(email, ip);
      const own = await counts.clientOnAccount.retryAfter(pair);
      if (own > 0) return { limit: 'client-on-account', wait: own };
      if (!loopback) {
        const everywhere = await counts.client.retryAfter(client);
        if (everywhere > 0) return { limit: 'client', wait: everywhere };
      }
      const account = await counts.account.retryAfter(email);
      if (account > 0 && !(await counts.known.knows(pair))) return { limit: 'account', wait: account };
      return null;
    },
    async failed(email, ip) {
      const { client, pair, loopback } = keys(email, ip);
      await counts.clientOnAccount.fail(pair);
      if (!loopback) await counts.client.fail(client);
      await counts.account.fail(email);
    },
    async succeeded(email, ip) {
      const { pair } = keys(email, ip);
      // The account's count goes on: one right password does not reopen it to everyone else.
      await counts.clientOnAccount.reset(pair);
      await counts.known.remember(pair);
    },
  };
}

const WHY: Record<SignInLimit, string> = {
  'client-on-account': 'Too many failed sign-ins to this account from your address; try again later',
  client: 'Too many failed sign-ins from your address; try again later',
  account:
    'Too many failed sign-ins to this account from elsewhere: for now it takes sign-ins only from where it signed in before; try again later',
};

/** The 429 of a refused sign-in, with Retry-After. */
export function signInRefused(refusal: { limit: SignInLimit; wait: number }): AppError {
  return new AppError(429, 'rate_limited', WHY[refusal.limit], undefined, {
    'retry-after': String(refusal.wait),
  });
}
