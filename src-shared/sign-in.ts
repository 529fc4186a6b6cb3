import { z } from 'zod';

/** Where a browser goes to sign in through the identity provider, and where the provider answers. */
export const OIDC_START_PATH = '/api/auth/oidc/start';
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';
/** The query parameter the sign-in page reads the reason of a refused sign-in from. */
export const SIGN_IN_ERROR_PARAM = 'signInError';

export const AuthMethodsSchema = z.object({
  password: z
    .boolean()
    .describe(
      'Whether `POST /api/auth/sign-in` takes an email and password (`serve --password-sign-in off`: no).',
    ),
  teamServer: z
    .boolean()
    .describe(
      "Whether this is a team server (PostgreSQL, shared by teammates) rather than a person's desktop.",
    ),
  identityProvider: z
    .object({
      name: z.string().describe("What to call it on the sign-in page: the issuer's host."),
      startUrl: z.string().describe('Where the browser goes to sign in with it (a navigation, not a fetch).'),
    })
    .optional()
    .describe('Present when the server signs people in through an OpenID Connect provider.'),
});
export type AuthMethods = z.infer<typeof AuthMethodsSchema>;

/**
 * A path of the dashboard to land on after signing in: same-origin only, so a link can never
 * send a person elsewhere once they have signed in.
 */
export const ReturnToSchema = z
  .string()
  .max(2000)
  .refine(
    (path) =>
      path.startsWith('/') &&
      !path.startsWith('//') &&
      !path.startsWith('/\\') &&
      !path.startsWith('/api/') &&
      // eslint-disable-next-line no-control-regex -- control characters are what is refused
      !/[\u0000-\u001f\u007f\\]/u.test(path),
    'must be a path of the dashboard, such as /sessions',
  );

/** Why a sign-in through the identity provider was refused: the code the sign-in page is sent. */
export const SIGN_IN_ERROR_CODES = [
  'not_invited',
  'email_unverified',
  'linked_elsewhere',
  'expired',
  'state_mismatch',
  'denied',
  'provider_error',
  'unverifiable',
  'unreachable',
  'busy',
  'bad_return_to',
  'failed',
] as const;
export type SignInErrorCode = (typeof SIGN_IN_ERROR_CODES)[number];

const SIGN_IN_ERROR_MESSAGES: Record<SignInErrorCode, string> = {
  not_invited:
    'Your email has no account on this server and was not invited. Ask an owner of this server to invite it, then sign in again.',
  email_unverified:
    'Your identity provider did not say your email address is verified, so it cannot be matched to an account here. Ask an owner of this server.',
  linked_elsewhere:
    'The account with your email is linked to another identity at this provider. Ask an owner of this server.',
  expired: 'That sign-in took too long, or was started in another browser. Sign in again.',
  state_mismatch:
    'That answer from the identity provider does not belong to the sign-in this browser started. Sign in again.',
  denied: 'The identity provider did not let you sign in.',
  provider_error: 'The identity provider could not sign you in. Try again, or ask an owner of this server.',
  unverifiable:
    "The identity provider's answer could not be verified, so you were not signed in. Ask the server's administrator to look at its log.",
  unreachable: 'The identity provider could not be reached. Try again in a moment.',
  busy: 'Too many sign-ins are under way on this server. Try again in a few minutes.',
  bad_return_to: 'That sign-in link was not one of this server\u2019s. Sign in from the sign-in page.',
  failed:
    'Session Desk could not finish the sign-in. Try again in a moment; if it goes on, its log says why.',
};

/** The sentence the sign-in page shows for a refused sign-in; null for a code it does not know. */
export function signInErrorMessage(code: string): string | null {
  return (SIGN_IN_ERROR_CODES as readonly string[]).includes(code)
    ? SIGN_IN_ERROR_MESSAGES[code as SignInErrorCode]
    : null;
}
