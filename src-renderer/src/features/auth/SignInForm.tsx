import { useState, type FormEvent } from 'react';
import { signInErrorMessage, type AuthMethods } from '../../../../src-shared/sign-in';
import { ApiError } from '../../api/client';
import { useAuthMethods, useDemoSignIn, useSetupStatus, useSignIn } from '../../api/queries';
import { TextField } from '../../components/Field';
import { Loading } from '../../components/States';

/** Email and password; used on the sign-in page and over a page whose sign-in expired. */
export function SignInForm({
  onSignedIn,
  defaultEmail = '',
}: {
  onSignedIn?: (() => void) | undefined;
  defaultEmail?: string | undefined;
}) {
  const signIn = useSignIn();
  const [email, setEmail] = useState(defaultEmail);
  const [password, setPassword] = useState('');
  const error = signIn.error instanceof ApiError ? signIn.error : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    signIn.mutate({ email, password }, { onSuccess: () => onSignedIn?.() });
  }

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <TextField
        label="Email"
        type="email"
        autoComplete="username"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        autoFocus={!defaultEmail}
      />
      <TextField
        label="Password"
        type="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        autoFocus={Boolean(defaultEmail)}
      />
      {error && (
        <p className="form-error" role="alert">
          {error.code === 'rate_limited'
            ? 'Too many attempts. Wait a few minutes and try again.'
            : error.message}
        </p>
      )}
      <button type="submit" className="button button-primary" disabled={signIn.isPending}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

/**
 * On a demo data directory only. Whoever opened the URL `serve` printed (the launch token)
 * signs in to the demo with one click; the demo's password is never sent to the page.
 */
function DemoSignIn() {
  const setup = useSetupStatus();
  const demo = useDemoSignIn();
  if (!setup.data?.demo) return null;
  if (!setup.data.launchToken) {
    return (
      <p className="muted small" role="note">
        Demo workspace: open the URL <code>sessiondesk serve --demo</code> printed to sign in, or sign in as{' '}
        <code>demo@sessiondesk.local</code> with the password it printed.
      </p>
    );
  }
  return (
    <>
      <button type="button" className="button" onClick={() => demo.mutate()} disabled={demo.isPending}>
        {demo.isPending ? 'Signing in…' : 'Sign in to the demo workspace'}
      </button>
      {demo.error && (
        <p className="form-error" role="alert">
          {demo.error.message}
        </p>
      )}
      <div className="divider" role="separator">
        or
      </div>
    </>
  );
}

/**
 * Leaves for the identity provider: a navigation (the server redirects), which comes back to
 * the page the person is on.
 */
function IdentityProviderSignIn({ provider }: { provider: NonNullable<AuthMethods['identityProvider']> }) {
  const returnTo = `${window.location.pathname}${window.location.search}`;
  return (
    <a
      className="button button-primary"
      href={`${provider.startUrl}?returnTo=${encodeURIComponent(returnTo)}`}
    >
      Sign in with {provider.name}
    </a>
  );
}

/**
 * Exactly the ways this server signs people in (`GET /api/auth/methods`): its identity provider,
 * the email and password form, or both. Should the question fail, the form, as before.
 */
export function SignInChoices({
  onSignedIn,
  defaultEmail,
}: {
  onSignedIn?: () => void;
  defaultEmail?: string;
}) {
  const methods = useAuthMethods();
  if (methods.isPending) return <Loading label="Loading the ways to sign in" />;
  const { password, identityProvider } = methods.data ?? { password: true, teamServer: false };
  return (
    <>
      {identityProvider && <IdentityProviderSignIn provider={identityProvider} />}
      {identityProvider && password && (
        <div className="divider" role="separator">
          or
        </div>
      )}
      {password && <SignInForm onSignedIn={onSignedIn} defaultEmail={defaultEmail} />}
    </>
  );
}

/** Where accounts come from here, under the ways to sign in. */
function AccountsNote() {
  const methods = useAuthMethods();
  if (!methods.data) return null;
  if (methods.data.identityProvider) {
    return (
      <p className="muted small">
        Signing in with {methods.data.identityProvider.name} for the first time? An owner of this server
        invites your email first.
      </p>
    );
  }
  if (methods.data.teamServer) {
    return (
      <p className="muted small">
        No account yet? Ask an owner of this server to add you to their workspace.
      </p>
    );
  }
  return (
    <p className="muted small">
      Accounts are local to this machine. Create one with <code>npx sessiondesk user create</code>.
    </p>
  );
}

export function SignInPage({
  onCreateAccount,
  signInError = null,
}: {
  onCreateAccount?: () => void;
  /** Why the last sign-in through the identity provider was refused, as the server's code. */
  signInError?: string | null;
}) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>Sign in to Session Desk</h1>
        {signInError !== null && (
          <p className="form-error" role="alert">
            {signInErrorMessage(signInError) ?? 'The sign-in did not go through. Try again.'}
          </p>
        )}
        <DemoSignIn />
        <SignInChoices />
        <AccountsNote />
        {onCreateAccount && (
          <button type="button" className="link-button" onClick={onCreateAccount}>
            Create your own owner account
          </button>
        )}
      </div>
    </main>
  );
}
