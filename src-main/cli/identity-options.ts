import { discoverProvider, ProviderUnreachableError, type ProviderSettings } from '../identity/provider.js';
import type { ServerConfig } from '../server/context.js';
import { CliError } from './admin-target.js';
import { UsageError } from './usage.js';

/**
 * `serve`'s sign-in options: an OpenID Connect provider (`--oidc-issuer`, `--oidc-client-id`,
 * `--oidc-allowed-domains`, the secret in SESSIONDESK_OIDC_CLIENT_SECRET only) and
 * `--password-sign-in on|off`, each option else its variable. Checked before anything opens;
 * the provider is discovered once they are.
 */

export interface SignInChoice {
  provider?: ProviderSettings & { allowedDomains: string[] };
  passwordSignIn: boolean;
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/u;

/** An option's value, else its variable's (a blank one counts as unset). */
function valueOf(values: Record<string, unknown>, option: string, variable: string, env: NodeJS.ProcessEnv) {
  const given = values[option];
  if (typeof given === 'string') return given.trim();
  const set = env[variable]?.trim();
  return set === undefined || set === '' ? undefined : set;
}

/**
 * A client secret given as an option is refused before anything is parsed, saying where it goes:
 * an option shows in the process list (ps), and the parser would only call it unknown.
 */
export function refuseSecretOption(args: readonly string[]): void {
  if (args.some((arg) => arg === '--oidc-client-secret' || arg.startsWith('--oidc-client-secret='))) {
    throw new UsageError(
      'there is no --oidc-client-secret: options show in the process list (ps). Put the client secret in the environment variable SESSIONDESK_OIDC_CLIENT_SECRET',
      'serve',
    );
  }
}

/** Refuses what cannot work together, naming the option (or variable) to change. */
export function signInChoice(values: Record<string, unknown>, env: NodeJS.ProcessEnv): SignInChoice {
  const issuer = valueOf(values, 'oidc-issuer', 'SESSIONDESK_OIDC_ISSUER', env);
  const clientId = valueOf(values, 'oidc-client-id', 'SESSIONDESK_OIDC_CLIENT_ID', env);
  const domains = valueOf(values, 'oidc-allowed-domains', 'SESSIONDESK_OIDC_ALLOWED_DOMAINS', env);
  const clientSecret =
    env.SESSIONDESK_OIDC_CLIENT_SECRET === '' ? undefined : env.SESSIONDESK_OIDC_CLIENT_SECRET;
  const passwordText = (
    valueOf(values, 'password-sign-in', 'SESSIONDESK_PASSWORD_SIGN_IN', env) ?? 'on'
  ).toLowerCase();
  if (passwordText !== 'on' && passwordText !== 'off') {
    throw new UsageError(`--password-sign-in must be on or off, not "${passwordText}"`, 'serve');
  }
  const passwordSignIn = passwordText === 'on';

  if (issuer === undefined) {
    if (!passwordSignIn) {
      throw new UsageError(
        '--password-sign-in off needs --oidc-issuer: with neither, nobody could sign in',
        'serve',
      );
    }
    const stray = [
      clientId !== undefined && '--oidc-client-id',
      domains !== undefined && '--oidc-allowed-domains',
      clientSecret !== undefined && 'SESSIONDESK_OIDC_CLIENT_SECRET',
    ].filter(Boolean);
    if (stray.length > 0) throw new UsageError(`${stray.join(', ')} needs --oidc-issuer`, 'serve');
    return { passwordSignIn };
  }
  const url = URL.canParse(issuer) ? new URL(issuer) : null;
  if (url?.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new UsageError(
      `--oidc-issuer must be the provider's https:// issuer URL (no query), not "${issuer}"`,
      'serve',
    );
  }
  if (clientId === undefined) {
    throw new UsageError('--oidc-issuer needs --oidc-client-id (or SESSIONDESK_OIDC_CLIENT_ID)', 'serve');
  }
  const allowedDomains = (domains ?? '')
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter((d) => d !== '');
  const wrong = allowedDomains.find((d) => !DOMAIN.test(d));
  if (wrong !== undefined || (domains !== undefined && allowedDomains.length === 0)) {
    throw new UsageError(
      `--oidc-allowed-domains must be domains separated by commas (example.com,example.org), not "${domains ?? ''}"`,
      'serve',
    );
  }
  return { passwordSignIn, provider: { issuer, clientId, clientSecret, allowedDomains } };
}

/** The provider, discovered: an issuer that cannot be used is a sentence (exit 1). */
export async function identityProviderOf(choice: SignInChoice): Promise<ServerConfig['identityProvider']> {
  if (!choice.provider) return undefined;
  const { allowedDomains, ...settings } = choice.provider;
  try {
    return { provider: await discoverProvider(settings), allowedDomains };
  } catch (err) {
    if (err instanceof ProviderUnreachableError) throw new CliError(err.message);
    throw err;
  }
}
