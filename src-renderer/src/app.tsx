import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState, type ReactNode } from 'react';
import { Link, Route, Routes } from 'react-router';
import { ApiError, onUnauthorized } from './api/client';
import { keys, useMe, useSetupStatus } from './api/queries';
import { EmptyState, ErrorState, Loading } from './components/States';
import { Shell } from './components/Shell';
import { SetupPage } from './features/auth/SetupPage';
import { SignInChoices, SignInPage } from './features/auth/SignInForm';
import { SessionsPage } from './features/sessions/SessionsPage';
import { PageTitle } from './lib/use-page-title';
import { useWorkspaceState, WorkspaceProvider } from './lib/workspace';

// The sessions list is the first page; the others (and the Markdown and diff code they
// bring) load on their own, so the first page's code stays small. They are fetched as soon as
// the first page is drawn, not when first opened: a click on "New session" then shows the form
// at once, rather than leaving the list on screen (and typing into it) while the code arrives.
const pageLoaders = {
  newSession: () => import('./features/sessions/NewSessionPage').then((m) => ({ default: m.NewSessionPage })),
  session: () => import('./features/sessions/SessionPage').then((m) => ({ default: m.SessionPage })),
  agent: () => import('./features/settings/AgentPage').then((m) => ({ default: m.AgentPage })),
  approvals: () => import('./features/settings/ApprovalsPage').then((m) => ({ default: m.ApprovalsPage })),
  api: () => import('./features/settings/ApiPage').then((m) => ({ default: m.ApiPage })),
  history: () => import('./features/settings/HistoryPage').then((m) => ({ default: m.HistoryPage })),
  keys: () => import('./features/settings/KeysPage').then((m) => ({ default: m.KeysPage })),
  members: () => import('./features/settings/MembersPage').then((m) => ({ default: m.MembersPage })),
  inbox: () => import('./features/approvals/InboxPage').then((m) => ({ default: m.InboxPage })),
  notifications: () =>
    import('./features/notifications/NotificationsPage').then((m) => ({ default: m.NotificationsPage })),
};
const NewSessionPage = lazy(pageLoaders.newSession);
const SessionPage = lazy(pageLoaders.session);
const AgentPage = lazy(pageLoaders.agent);
const ApprovalsPage = lazy(pageLoaders.approvals);
const ApiPage = lazy(pageLoaders.api);
const HistoryPage = lazy(pageLoaders.history);
const KeysPage = lazy(pageLoaders.keys);
const MembersPage = lazy(pageLoaders.members);
const InboxPage = lazy(pageLoaders.inbox);
const NotificationsPage = lazy(pageLoaders.notifications);

/** Fetches every page's code once the browser is idle (a failed fetch is tried again on opening). */
function usePagesFetchedAhead() {
  useEffect(() => {
    const fetchAll = () => {
      for (const load of Object.values(pageLoaders)) load().catch(() => undefined);
    };
    if ('requestIdleCallback' in window) {
      const id = window.requestIdleCallback(fetchAll, { timeout: 2000 });
      return () => window.cancelIdleCallback(id);
    }
    const timer = setTimeout(fetchAll, 200);
    return () => clearTimeout(timer);
  }, []);
}

/** A page with its tab title; a page loaded on demand shows a loading state meanwhile. */
function Page({ title, children }: { title?: string; children: ReactNode }) {
  return (
    <Suspense fallback={<Loading label="Loading page" />}>
      {title !== undefined && <PageTitle name={title} />}
      {children}
    </Suspense>
  );
}

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
        <SignInChoices defaultEmail={email} onSignedIn={onDone} />
      </div>
    </div>
  );
}

function Routed() {
  const state = useWorkspaceState();
  usePagesFetchedAhead();
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
        <Route
          path="/"
          element={
            <Page title="Sessions">
              <SessionsPage />
            </Page>
          }
        />
        <Route
          path="/new"
          element={
            <Page title="New session">
              <NewSessionPage />
            </Page>
          }
        />
        <Route
          path="/inbox"
          element={
            <Page title="Inbox">
              <InboxPage />
            </Page>
          }
        />
        {/* The session page names the tab after its session. */}
        <Route
          path="/sessions/:sessionId"
          element={
            <Page>
              <SessionPage />
            </Page>
          }
        />
        <Route
          path="/settings/keys"
          element={
            <Page title="API keys">
              <KeysPage />
            </Page>
          }
        />
        <Route
          path="/settings/history"
          element={
            <Page title="History">
              <HistoryPage />
            </Page>
          }
        />
        <Route
          path="/settings/members"
          element={
            <Page title="Members">
              <MembersPage />
            </Page>
          }
        />
        <Route
          path="/settings/agent"
          element={
            <Page title="Agent">
              <AgentPage />
            </Page>
          }
        />
        <Route
          path="/settings/approvals"
          element={
            <Page title="Approvals">
              <ApprovalsPage />
            </Page>
          }
        />
        <Route
          path="/settings/api"
          element={
            <Page title="API">
              <ApiPage />
            </Page>
          }
        />
        <Route
          path="/settings/notifications"
          element={
            <Page title="Notifications">
              <NotificationsPage />
            </Page>
          }
        />
        <Route
          path="*"
          element={
            <EmptyState title="Nothing here">
              <PageTitle name="Nothing here" />
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

export function App({
  launchTokenRefused = false,
  signInError = null,
}: {
  launchTokenRefused?: boolean;
  /** Why a sign-in through the identity provider was refused, from the address it came back to. */
  signInError?: string | null;
}) {
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
          setupCode={setup.data.setupCode}
          launchTokenRefused={launchTokenRefused}
        />
      );
    }
    if (me.error instanceof ApiError && me.error.status === 401)
      return <SignInPage signInError={signInError} />;
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
