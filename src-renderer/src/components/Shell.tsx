import { useCallback, useState, type FormEvent, type ReactNode } from 'react';
import { NavLink, useNavigate } from 'react-router';
import { usePendingApprovals } from '../api/approvals';
import { LiveContext, useLiveEvents } from '../api/live';
import { useCreateWorkspace, useSetupStatus, useSignOut } from '../api/queries';
import { useAlerts } from '../features/notifications/use-alerts';
import { useWorkspace } from '../lib/workspace';
import { HELP_KEY } from '../lib/shortcuts';
import { useShortcut } from '../lib/use-shortcut';
import { Avatar } from './Avatar';
import { ShortcutsHelp } from './ShortcutsHelp';

const navLink = ({ isActive }: { isActive: boolean }) => (isActive ? 'nav-link active' : 'nav-link');

/** The Inbox in the navigation, with how many requests wait in the workspace. */
function InboxLink({ org, live }: { org: string; live: boolean }) {
  const pending = usePendingApprovals(org, live);
  const count = pending.data?.approvals.length ?? 0;
  return (
    <NavLink to="/inbox" className={navLink} aria-label={count > 0 ? `Inbox, ${count} waiting` : undefined}>
      <span>Inbox</span>
      {count > 0 && (
        <span className="nav-count" aria-hidden="true">
          {count}
        </span>
      )}
    </NavLink>
  );
}

function WorkspaceSwitcher() {
  const { me, workspace, select } = useWorkspace();
  const create = useCreateWorkspace();
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const navigate = useNavigate();

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(name, {
      onSuccess: ({ workspace: created }) => {
        select(created.organizationId);
        setAdding(false);
        setName('');
        void navigate('/');
      },
    });
  }

  return (
    <div className="switcher">
      <label htmlFor="workspace-select" className="eyebrow">
        Workspace
      </label>
      <div className="switcher-row">
        <select
          id="workspace-select"
          value={workspace.organizationId}
          onChange={(e) => {
            select(e.target.value);
            void navigate('/');
          }}
        >
          {me.workspaces.map((w) => (
            <option key={w.organizationId} value={w.organizationId}>
              {w.name}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="icon-button"
          aria-label="Create a workspace"
          aria-expanded={adding}
          onClick={() => setAdding(!adding)}
        >
          +
        </button>
      </div>
      {adding && (
        <form onSubmit={submit} className="switcher-new">
          <label htmlFor="new-workspace" className="visually-hidden">
            New workspace name
          </label>
          <input
            id="new-workspace"
            placeholder="New workspace name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoFocus
          />
          <button type="submit" className="button button-small" disabled={create.isPending}>
            Create
          </button>
          {create.error && (
            <p className="field-error" role="alert">
              {create.error.message}
            </p>
          )}
        </form>
      )}
    </div>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const { me, workspace } = useWorkspace();
  const live = useLiveEvents(workspace.organizationId, useAlerts());
  const signOut = useSignOut();
  const setup = useSetupStatus();
  const [shortcuts, setShortcuts] = useState(false);
  useShortcut(
    HELP_KEY,
    useCallback(() => setShortcuts(true), []),
  );
  const link = navLink;
  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Main">
        <div className="brand">Session Desk</div>
        <WorkspaceSwitcher />
        <NavLink to="/new" className="button button-primary new-session">
          New session
        </NavLink>
        <ul className="nav">
          <li>
            <NavLink to="/" end className={link}>
              Sessions
            </NavLink>
          </li>
          <li>
            <InboxLink org={workspace.organizationId} live={live} />
          </li>
          <li className="eyebrow nav-heading">Settings</li>
          <li>
            <NavLink to="/settings/keys" className={link}>
              API keys
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/history" className={link}>
              History
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/members" className={link}>
              Members
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/agent" className={link}>
              Agent
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/approvals" className={link}>
              Approvals
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/api" className={link}>
              API
            </NavLink>
          </li>
          <li>
            <NavLink to="/settings/notifications" className={link}>
              Notifications
            </NavLink>
          </li>
        </ul>
        {setup.data?.needed && (
          <p className="muted small demo-note">
            You are exploring the demo. Sign out to create your own account.
          </p>
        )}
        <button
          type="button"
          className="link-button muted small"
          aria-keyshortcuts={HELP_KEY}
          onClick={() => setShortcuts(true)}
        >
          Keyboard shortcuts <kbd>{HELP_KEY}</kbd>
        </button>
        <p className="muted small live-state" role="status">
          <span className={live ? 'dot dot-live' : 'dot'} aria-hidden="true" />{' '}
          {live ? 'Live' : 'Reconnecting…'}
        </p>
        <div className="me">
          <Avatar name={me.user.name} imageUrl={me.user.imageUrl} size={28} />
          <div className="me-text">
            <div className="me-name" title={me.user.name}>
              {me.user.name}
            </div>
            <div className="muted small me-email" title={me.user.email}>
              {me.user.email}
            </div>
          </div>
          <button type="button" className="button button-small" onClick={() => signOut.mutate()}>
            Sign out
          </button>
        </div>
      </nav>
      <main className="content">
        <LiveContext.Provider value={live}>{children}</LiveContext.Provider>
      </main>
      <ShortcutsHelp open={shortcuts} onClose={() => setShortcuts(false)} />
    </div>
  );
}
