import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { createIdentityAccounts } from '../accounts/identity-accounts.js';
import { hashSecret } from '../accounts/secrets.js';
import type { Clock, Logger } from '../clock.js';
import type { Storage } from '../store/storage.js';
import { SignInRefused, type IdentityProvider } from './provider.js';

/**
 * A sign-in through the identity provider, from the browser leaving for the provider to its
 * coming back. What its answer is checked against (the state's hash, the nonce, the PKCE
 * verifier, where to land) is kept in the database, not in this process: behind a proxy that
 * shares requests between several server processes, the answer may reach another one.
 *
 * The browser holds a random handle in a cookie of its own; the database keeps only the
 * handle's hash, so the flow is this browser's. A flow is taken out of the database as its
 * answer arrives: a second answer (a replay, a reload) finds nothing.
 */

/** How long a person has at the provider before the flow expires. */
export const FLOW_LIFETIME_MS = 10 * 60_000;
/**
 * Flows under way at once, at most: anyone can start one, and each is a row until it expires.
 * Past it new sign-ins are refused (busy) for a few minutes, rather than the table growing.
 */
export const MAX_FLOWS_UNDER_WAY = 10_000;

const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

export interface SignInFlows {
  readonly providerName: string;
  /** A new flow: the handle for the browser's cookie, and where to send the browser. */
  start(input: {
    redirectUri: string;
    returnTo: string;
  }): Promise<{ handle: string; authorizationUrl: string }>;
  /**
   * The provider's answer, as the browser brought it back with its handle: the account signed
   * in, and where to land. Throws `SignInRefused`.
   */
  finish(input: {
    handle: string | undefined;
    query: URLSearchParams;
  }): Promise<{ userId: string; returnTo: string }>;
}

export function createSignInFlows(deps: {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  provider: IdentityProvider;
  allowedDomains: readonly string[];
}): SignInFlows {
  const { storage, clock, logger, provider } = deps;
  const accounts = createIdentityAccounts(storage, clock, { allowedDomains: deps.allowedDomains });

  return {
    providerName: provider.displayName,

    async start({ redirectUri, returnTo }) {
      const handle = randomBytes(32).toString('base64url');
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const now = clock.now();
      await storage.write(async (tx) => {
        await tx.signInFlows.deleteExpired(now.toISOString());
        if ((await tx.signInFlows.countActive(now.toISOString())) >= MAX_FLOWS_UNDER_WAY) {
          throw new SignInRefused('busy', `${MAX_FLOWS_UNDER_WAY} sign-ins are under way already`);
        }
        await tx.signInFlows.insert({
          handleHash: hashSecret(handle),
          stateHash: hashSecret(state),
          nonce,
          codeVerifier,
          redirectUri,
          returnTo,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + FLOW_LIFETIME_MS).toISOString(),
        });
      });
      const codeChallenge = await oidc.calculatePKCECodeChallenge(codeVerifier);
      return {
        handle,
        authorizationUrl: provider.authorizationUrl({ redirectUri, state, nonce, codeChallenge }),
      };
    },

    async finish({ handle, query }) {
      if (handle === undefined || handle === '') {
        throw new SignInRefused('expired', 'the browser brought back no sign-in of its own (no cookie)');
      }
      const now = clock.now().toISOString();
      const flow = await storage.write((tx) => tx.signInFlows.take(hashSecret(handle), now));
      if (!flow)
        throw new SignInRefused(
          'expired',
          'no sign-in under way for this browser: expired, or answered already',
        );
      const state = query.get('state') ?? '';
      if (!sameHash(hashSecret(state), flow.stateHash)) {
        throw new SignInRefused(
          'state_mismatch',
          'the answer\u2019s state is not the one this browser was sent with',
        );
      }
      // The URL the provider answered to, as openid-client reads it: the redirect URI the flow
      // was sent with (whichever process this is, and whatever Host it was reached by) and the query.
      const callbackUrl = new URL(flow.redirectUri);
      callbackUrl.search = query.toString();
      const identity = await provider.redeem({
        callbackUrl,
        state,
        nonce: flow.nonce,
        codeVerifier: flow.codeVerifier,
      });
      const outcome = await accounts.signIn(identity);
      if (!outcome.signedIn) {
        const who = outcome.email ?? `subject ${identity.subject}`;
        const why = {
          email_unverified: 'the provider gave no verified email',
          not_invited: 'no account has this email, it is not invited and its domain is not allowed',
          linked_elsewhere: 'the account with this email is linked to another identity at this provider',
        }[outcome.reason];
        throw new SignInRefused(outcome.reason, `${who}: ${why}`);
      }
      if (outcome.created) {
        const joined = outcome.joined.length > 0 ? `, a member of ${outcome.joined.join(', ')}` : '';
        logger.info(
          `account made for ${outcome.email} at its first sign-in through ${provider.displayName}${joined}`,
          { event: 'account.created', email: outcome.email },
        );
      }
      return { userId: outcome.userId, returnTo: flow.returnTo };
    },
  };
}
