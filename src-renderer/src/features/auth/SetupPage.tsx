import { useState, type FormEvent } from 'react';
import type { SetupAgent } from '../../../../src-shared/accounts';
import { ApiError } from '../../api/client';
import { useDemoSetup, useSetup, useSetupCode, useSetupStatus } from '../../api/queries';
import { TextField } from '../../components/Field';
import { SignInPage } from './SignInForm';

/**
 * First run: the owner account and a first workspace, or the demo. Stays offered while the
 * demo's are the only accounts; once the demo exists, signing in to it comes first (its
 * sign-in is what `serve --demo` prints), with setup a click away.
 */
export function SetupPage({
  demoExists,
  launchToken,
  setupCode,
  launchTokenRefused,
}: {
  demoExists: boolean;
  /** Whether this browser presented the launch token: setup needs it. */
  launchToken: boolean;
  /** Whether the token is a code to type in (a server with a public URL). */
  setupCode: boolean;
  launchTokenRefused: boolean;
}) {
  const [signingIn, setSigningIn] = useState(demoExists);
  if (signingIn) return <SignInPage onCreateAccount={() => setSigningIn(false)} />;
  if (!launchToken && setupCode) return <SetupCodeForm />;
  if (!launchToken) {
    return (
      <NeedsLaunchToken
        refused={launchTokenRefused}
        {...(demoExists ? { onSignIn: () => setSigningIn(true) } : {})}
      />
    );
  }
  return <SetupForm demoExists={demoExists} onSignIn={() => setSigningIn(true)} />;
}

/**
 * Reaching the port does not make anyone the owner: setup is for whoever started the server,
 * who has the URL with its token (as with Jupyter).
 */
function NeedsLaunchToken({ refused, onSignIn }: { refused: boolean; onSignIn?: () => void }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>Welcome to Session Desk</h1>
        <p role="alert">
          {refused
            ? 'The link you opened is from an earlier start of Session Desk: its token changes at every start.'
            : 'This page was opened without the link that started Session Desk.'}
        </p>
        <p className="muted">
          To create the owner account or open the demo, open the URL that <code>sessiondesk serve</code>{' '}
          printed in its terminal (it ends in <code>?token=…</code>). The desktop app opens it by itself.
        </p>
        {onSignIn && (
          <button type="button" className="link-button" onClick={onSignIn}>
            Sign in with an existing account
          </button>
        )}
      </div>
    </main>
  );
}

/**
 * A server other people reach puts no secret in a URL: whoever started it types the code it
 * printed on its terminal. Anyone else is told how the first account is made.
 */
function SetupCodeForm() {
  const [code, setCode] = useState('');
  const exchange = useSetupCode();
  const refused = exchange.error instanceof ApiError && exchange.error.status === 403;
  function submit(event: FormEvent) {
    event.preventDefault();
    exchange.mutate(code);
  }
  return (
    <main className="auth-page">
      <form className="auth-card stack" onSubmit={submit}>
        <h1>Set up Session Desk</h1>
        <p className="muted">
          No account exists yet. Type the setup code that <code>sessiondesk serve</code> printed on the
          server&apos;s terminal to create the owner account, or ask whoever runs this server to create it
          with <code>sessiondesk user create</code>.
        </p>
        <TextField
          label="Setup code"
          value={code}
          onChange={(event) => setCode(event.target.value)}
          autoComplete="off"
          placeholder="XXXX-XXXX-XXXX-XXXX"
          error={
            refused
              ? 'This is not a setup code of this server. Codes last 24 hours and end when the server process that printed them stops.'
              : exchange.error
                ? exchange.error.message
                : undefined
          }
        />
        <button
          type="submit"
          className="button button-primary"
          disabled={code.trim() === '' || exchange.isPending}
        >
          Continue
        </button>
      </form>
    </main>
  );
}

/** How an agent is told apart in the form: its kind, and an ACP agent's id. */
const keyOf = (agent: SetupAgent) => (agent.acpAgent ? `${agent.kind}:${agent.acpAgent}` : agent.kind);

/** The agent offered first: the first real agent installed here, else the simulated demo agent. */
function preferredAgent(agents: SetupAgent[]): SetupAgent | undefined {
  return agents.find((a) => a.found && !a.simulated) ?? agents.find((a) => a.simulated);
}

/**
 * Which agent the first workspace uses: every agent found here (the ACP agents among them), the
 * demo agent said plainly, and the agent CLIs not installed with the command that installs them.
 */
function AgentChoice({
  agents,
  value,
  onChange,
  error,
}: {
  agents: SetupAgent[];
  value: SetupAgent;
  onChange: (agent: SetupAgent) => void;
  error: string | undefined;
}) {
  const noneInstalled = !agents.some((a) => a.found && !a.simulated);
  return (
    <fieldset className="stack setup-agents">
      <legend className="setup-agents-legend">Agent for this workspace</legend>
      {agents.map((agent) => (
        <label key={keyOf(agent)} className="checkbox cli-choice">
          <input
            type="radio"
            name="agent"
            value={keyOf(agent)}
            checked={keyOf(value) === keyOf(agent)}
            disabled={!agent.found}
            onChange={() => onChange(agent)}
          />{' '}
          <span className="cli-choice-name">{agent.name}</span>{' '}
          <span className="muted small">
            (
            {agent.simulated
              ? 'made-up runs; changes nothing'
              : agent.found
                ? agent.version
                  ? `version ${agent.version}`
                  : 'installed'
                : agent.install
                  ? `not installed: ${agent.install}`
                  : 'not installed'}
            )
          </span>
        </label>
      ))}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <span className="muted small">
        {noneInstalled
          ? 'No agent was found on this machine. Install one (the commands are above), then choose it in Settings › Agent; Settings › Agent lists more.'
          : 'Agents edit, run commands and commit in each session’s own copy of the repository. You can change this later, and check the agent, in Settings › Agent.'}
      </span>
    </fieldset>
  );
}

function SetupForm({ demoExists, onSignIn }: { demoExists: boolean; onSignIn: () => void }) {
  const setup = useSetup();
  const demo = useDemoSetup();
  const status = useSetupStatus().data;
  const agents = status?.agents ?? [];
  // A team server cannot make the demo: it is offered only where it can be made.
  const demoAvailable = status?.demoAvailable !== false;
  const [form, setForm] = useState({ name: '', email: '', password: '', workspaceName: '' });
  const [agent, setAgent] = useState<SetupAgent | null>(null);
  const chosenAgent = agent ?? preferredAgent(agents);
  const error = setup.error instanceof ApiError ? setup.error : null;
  const set = (field: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [field]: e.target.value });

  function submit(event: FormEvent) {
    event.preventDefault();
    setup.mutate(
      chosenAgent
        ? {
            ...form,
            agent: chosenAgent.kind,
            ...(chosenAgent.acpAgent === undefined ? {} : { acpAgent: chosenAgent.acpAgent }),
          }
        : form,
    );
  }

  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>Welcome to Session Desk</h1>
        <p className="muted">
          Create the owner account for this {demoAvailable ? 'machine' : 'server'} and a first workspace.
        </p>
        <form className="stack" onSubmit={submit} noValidate>
          <TextField
            label="Your name"
            autoComplete="name"
            value={form.name}
            onChange={set('name')}
            error={error?.fieldError('body.name')}
            autoFocus
          />
          <TextField
            label="Email"
            type="email"
            autoComplete="username"
            value={form.email}
            onChange={set('email')}
            error={error?.fieldError('body.email')}
          />
          <TextField
            label="Password"
            type="password"
            autoComplete="new-password"
            value={form.password}
            onChange={set('password')}
            error={error?.fieldError('body.password')}
            hint="At least 8 characters."
          />
          <TextField
            label="Workspace name"
            value={form.workspaceName}
            onChange={set('workspaceName')}
            error={error?.fieldError('body.workspaceName')}
            hint="For example your team or project."
          />
          {chosenAgent && (
            <AgentChoice
              agents={agents}
              value={chosenAgent}
              onChange={setAgent}
              error={error?.fieldError('body.agent') ?? error?.fieldError('body.acpAgent')}
            />
          )}
          {error && error.details.length === 0 && (
            <p className="form-error" role="alert">
              {error.message}
            </p>
          )}
          <button type="submit" className="button button-primary" disabled={setup.isPending}>
            {setup.isPending ? 'Creating…' : 'Create account and workspace'}
          </button>
        </form>
        {demoAvailable && (
          <>
            <div className="divider" role="separator">
              or
            </div>
            <button type="button" className="button" onClick={() => demo.mutate()} disabled={demo.isPending}>
              {demo.isPending
                ? 'Preparing the demo…'
                : demoExists
                  ? 'Back to the demo workspace'
                  : 'Explore the demo workspace'}
            </button>
            <p className="muted small">
              Sample sessions, people and an offline demo agent. You can still create your own account here
              afterwards.
            </p>
          </>
        )}
        {demoExists && (
          <button type="button" className="link-button" onClick={onSignIn}>
            Sign in with an existing account
          </button>
        )}
        {demo.error && (
          <p className="form-error" role="alert">
            {demo.error.message}
          </p>
        )}
      </div>
    </main>
  );
}
