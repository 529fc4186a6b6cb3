import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useDemoSignIn, useSignIn } from '../../api/queries';
import { TextField } from '../../components/Field';

/** Email and password; used on the sign-in page and over a page whose sign-in expired. */
export function SignInForm({
  onSignedIn,
  defaultEmail = '',
}: {
  onSignedIn?: () => void;
  defaultEmail?: string;
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

/** On a demo data directory only: the demo owner's random password, made with the demo. */
function DemoSignInNote() {
  const demo = useDemoSignIn();
  if (!demo.data) return null;
  return (
    <p className="muted small" role="note">
      Demo workspace: sign in as <code>{demo.data.email}</code> with the password{' '}
      <code>{demo.data.password}</code>.
    </p>
  );
}

export function SignInPage({ onCreateAccount }: { onCreateAccount?: () => void }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>Sign in to Session Desk</h1>
        <DemoSignInNote />
        <SignInForm />
        <p className="muted small">
          Accounts are local to this machine. Create one with <code>npx sessiondesk user create</code>.
        </p>
        {onCreateAccount && (
          <button type="button" className="link-button" onClick={onCreateAccount}>
            Create your own owner account
          </button>
        )}
      </div>
    </main>
  );
}
