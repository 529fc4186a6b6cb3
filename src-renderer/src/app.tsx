import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, Route, Routes } from 'react-router';
import { ApiError, onUnauthorized } from './api/client';
import { keys, useMe, useSetupStatus } from './api/queries';
import { EmptyState, ErrorState, Loading } from './components/States';
import { Shell } from './components/Shell';
import { SetupPage } from './features/auth/SetupPage';
import { SignInForm, SignInPage } from './features/auth/SignInForm';
import { NewSessionPage } from './features/sessions/NewSessionPage';
import { SessionPage } from './features/sessions/SessionPage';
import { SessionsPage } from './features/sessions/SessionsPage';
import { AgentPage } from './features/settings/AgentPage';
import { ApiPage } from './features/settings/ApiPage';
import { HistoryPage } from './features/settings/HistoryPage';
import { KeysPage } from './features/settings/KeysPage';
import { MembersPage } from './features/settings/MembersPage';
import { useWorkspaceState, WorkspaceProvider } from './lib/workspace';

/**
 * Shown over the page when the sign-in expires: the page stays mounted underneath, so
 * whatever the person was typing is still there once they sign in again.
 */
function SignInAgain({ email, onDone }: { email: string; onDone: () => void }) {
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="expired-title">
      <div className="auth-card">
        <h2 id="expired-title">Your sign-in has expired</h2>
        <p className="muted">Sign in again to carry on; nothing you typed is lost.</p>
        <SignInForm defaultEmail={email} onSignedIn={onDone} />
      </div>
    </div>
  );
}

function Routed() {
  const state = useWorkspaceState();
  if (!state) {
    return (
      <main className="auth-page">
        <EmptyState title="You are not in a workspace yet">
          <p>
            Ask a workspace owner to add you, or create one with <code>npx sessiondesk workspace create</code>
            .
          </p>
        </EmptyState>
      </main>
    );
  }
  return (
    <Shell>
      <Routes>
        <Route path="/" element={<SessionsPage />} />
        <Route path="/new" element={<NewSessionPage />} />
        <Route path="/sessions/:sessionId" element={<SessionPage />} />
        <Route path="/settings/keys" element={<KeysPage />} />
        <Route path="/settings/history" element={<HistoryPage />} />
        <Route path="/settings/members" element={<MembersPage />} />
        <Route path="/settings/agent" element={<AgentPage />} />
        <Route path="/settings/api" element={<ApiPage />} />
        <Route
          path="*"
          element={
            <EmptyState title="Nothing here">
              <p>The page you asked for does not exist.</p>
              <Link to="/" className="button button-primary">
                Back to sessions
              </Link>
            </EmptyState>
          }
        />
      </Routes>
    </Shell>
  );
}

export function App({ launchTokenRefused = false }: { launchTokenRefused?: boolean }) {
  const client = useQueryClient();
  const setup = useSetupStatus();
  const me = useMe();
  const [expired, setExpired] = useState(false);
  useEffect(
    () =>
      onUnauthorized(() => {
        // Only a sign-in that existed can expire; before signing in, 401 is expected.
        if (client.getQueryData(keys.me)) setExpired(true);
      }),
    [client],
  );

  if (setup.isPending || me.isPending) return <Loading label="Starting" />;
  if (!me.data) {
    // Until someone creates their own account (the demo's do not count), setup stays offered.
    if (setup.data?.needed) {
      return (
        <SetupPage
          demoExists={setup.data.demo === true}
          launchToken={setup.data.launchToken}
          launchTokenRefused={launchTokenRefused}
        />
      );
    }
    if (me.error instanceof ApiError && me.error.status === 401) return <SignInPage />;
    return <ErrorState error={me.error ?? setup.error} onRetry={() => void me.refetch()} />;
  }
  return (
    <WorkspaceProvider me={me.data}>
      <Routed />
      {expired && (
        <SignInAgain
          email={me.data.user.email}
          onDone={() => {
            setExpired(false);
            void client.invalidateQueries();
          }}
        />
      )}
    </WorkspaceProvider>
  );
}
