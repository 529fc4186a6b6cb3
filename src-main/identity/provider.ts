import * as oidc from 'openid-client';
import type { SignInErrorCode } from '../../src-shared/sign-in.js';

/**
 * The identity provider as Session Desk uses it, through openid-client (a certified OpenID
 * Connect client): discovery of its endpoints and keys, the authorization URL (code flow with
 * PKCE S256, state and nonce), and the exchange of its answer for a verified ID token (its
 * signature, issuer, audience, nonce and expiry checked by the library, never here).
 */

/** How the server was told to reach its provider (`serve --oidc-issuer`, `--oidc-client-id`). */
export interface ProviderSettings {
  issuer: string;
  clientId: string;
  /** Absent for a public client, which proves itself with PKCE alone. */
  clientSecret?: string | undefined;
}

/** Who the provider says signed in: its claims, as the verified ID token (or userinfo) gave them. */
export interface ProvidedIdentity {
  issuer: string;
  subject: string;
  email?: string;
  /** True only when the provider said `email_verified: true`. */
  emailVerified: boolean;
  name?: string;
}

/** A sign-in refused: the code the sign-in page is sent, and what the server's log says. */
export class SignInRefused extends Error {
  constructor(
    readonly code: SignInErrorCode,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** The provider could not be discovered at start: a sentence naming it, for the command line. */
export class ProviderUnreachableError extends Error {}

export interface IdentityProvider {
  readonly issuer: string;
  /** What the sign-in page calls it: the issuer's host. */
  readonly displayName: string;
  authorizationUrl(input: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string;
  }): string;
  /**
   * Checks the provider's answer (the callback's URL, its `iss` too where the provider sends
   * one) against the flow's state, exchanges the code with the PKCE verifier and verifies the
   * ID token against the nonce. Throws `SignInRefused`.
   */
  redeem(input: {
    callbackUrl: URL;
    state: string;
    nonce: string;
    codeVerifier: string;
  }): Promise<ProvidedIdentity>;
}

/** Each request to the provider: discovery, the token exchange, its keys, userinfo. */
const TIMEOUT_SECONDS = 10;
export const SCOPE = 'openid email profile';

/** The error codes Node and its fetch give a connection that failed, and what they mean. */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'its host name is unknown',
  EAI_AGAIN: 'its host name could not be looked up',
  EHOSTUNREACH: 'its host cannot be reached',
  ENETUNREACH: 'its network cannot be reached',
  UND_ERR_CONNECT_TIMEOUT: `it did not answer within ${TIMEOUT_SECONDS} s`,
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate is signed by a CA this machine does not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate is signed by a CA this machine does not trust',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is signed by a CA this machine does not trust',
  CERT_HAS_EXPIRED: 'its certificate has expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is not for that host name',
};

/** Why a request to the provider failed, in words: the innermost cause Node gave. */
function reasonOf(err: unknown): string {
  for (let cause: unknown = err, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError') {
      return `it did not answer within ${TIMEOUT_SECONDS} s`;
    }
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== undefined && code in CONNECTION_FAILURES) {
      const reason = CONNECTION_FAILURES[code]!;
      return reason.includes('certificate') && reason.includes('trust')
        ? `${reason} (${code}): start Session Desk with NODE_EXTRA_CA_CERTS=/path/to/ca.pem to trust a private CA`
        : `${reason} (${code})`;
    }
    cause = cause.cause;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A connection that failed, rather than an answer that was wrong. */
function isConnectionFailure(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && /timeout|abort/iu.test(err.name));
}

/** The provider's answer refused, in a code for the page and a line for the log. */
function refusalOf(err: unknown): SignInRefused {
  if (err instanceof oidc.AuthorizationResponseError) {
    const said = `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
    return new SignInRefused(
      err.error === 'access_denied' ? 'denied' : 'provider_error',
      `the provider answered ${said}`,
    );
  }
  if (err instanceof oidc.ResponseBodyError) {
    const said = `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
    return new SignInRefused('provider_error', `the provider refused the code (${err.status} ${said})`);
  }
  if (isConnectionFailure(err)) {
    return new SignInRefused('unreachable', `the provider could not be reached: ${reasonOf(err)}`);
  }
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return new SignInRefused(
    'unverifiable',
    `the provider's answer failed verification (${typeof code === 'string' ? `${code}: ` : ''}${message})`,
  );
}

const optionalString = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Finds the provider's endpoints and keys (OpenID Connect discovery) and makes its client.
 * An issuer that cannot be reached, or that answers as no OpenID provider, throws
 * `ProviderUnreachableError` with a sentence naming it.
 */
export async function discoverProvider(settings: ProviderSettings): Promise<IdentityProvider> {
  const issuerUrl = new URL(settings.issuer);
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(
      issuerUrl,
      settings.clientId,
      settings.clientSecret === undefined ? undefined : { client_secret: settings.clientSecret },
      // The authentication OpenID Connect assumes when a client registered none.
      settings.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(settings.clientSecret),
      // The ID token's signature is checked against the provider's keys too, not only its claims.
      { timeout: TIMEOUT_SECONDS, execute: [oidc.enableNonRepudiationChecks] },
    );
  } catch (err) {
    const reason = isConnectionFailure(err)
      ? `it could not be reached: ${reasonOf(err)}`
      : `it did not answer as an OpenID Connect provider (${err instanceof Error ? err.message : String(err)})`;
    throw new ProviderUnreachableError(
      `The identity provider ${settings.issuer} cannot be used: ${reason}. Check --oidc-issuer ` +
        '(SESSIONDESK_OIDC_ISSUER): it must be the issuer URL whose /.well-known/openid-configuration the provider serves.',
    );
  }
  const issuer = config.serverMetadata().issuer;
  return {
    issuer,
    displayName: new URL(issuer).host,
    authorizationUrl(input) {
      return oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: input.redirectUri,
          scope: SCOPE,
          state: input.state,
          nonce: input.nonce,
          code_challenge: input.codeChallenge,
          code_challenge_method: 'S256',
        })
        .toString();
    },
    async redeem(input) {
      try {
        const tokens = await oidc.authorizationCodeGrant(config, input.callbackUrl, {
          pkceCodeVerifier: input.codeVerifier,
          expectedState: input.state,
          expectedNonce: input.nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new SignInRefused('unverifiable', 'the provider sent no ID token');
        let { email, email_verified: verified, name } = claims;
        // A provider may keep the profile out of the ID token when it also issues an access
        // token (OpenID Connect Core 5.4): then userinfo, checked to be the same subject.
        if (email === undefined && config.serverMetadata().userinfo_endpoint !== undefined) {
          const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
          ({ email, email_verified: verified } = info);
          name ??= info.name;
        }
        const identity: ProvidedIdentity = { issuer, subject: claims.sub, emailVerified: verified === true };
        const mail = optionalString(email);
        const shownName = optionalString(name);
        if (mail !== undefined) identity.email = mail;
        if (shownName !== undefined) identity.name = shownName;
        return identity;
      } catch (err) {
        throw err instanceof SignInRefused ? err : refusalOf(err);
      }
    },
  };
}
