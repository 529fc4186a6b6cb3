import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { AgentKindInfo, AgentSettings } from '../../../../src-shared/accounts';
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS, type ApprovalMode } from '../../../../src-shared/approvals';
import { ApiError } from '../../api/client';
import { useAgentKinds, useAgentSettings, useSaveAgentSettings } from '../../api/queries';
import { TextField } from '../../components/Field';
import { ErrorState, Loading } from '../../components/States';
import { useWorkspace } from '../../lib/workspace';
import { AgentCheckSection } from './AgentCheckSection';
import { InstalledAgents, MissingAgents, offered } from './AgentChoices';
import { NetworkSection } from './NetworkSection';
import './agent-page.css';
import { SandboxSection } from './SandboxSection';

const SOURCE_NOTE: Record<'workspace' | 'environment' | 'default', string> = {
  workspace: 'Set for this workspace.',
  environment: 'From SESSIONDESK_AGENT_COMMAND, for workspaces without their own setting.',
  default:
    'None chosen yet: sessions run the simulated demo agent, labelled Simulated. Choose a real agent below.',
};

type NamedCommand = { name: string; command: string[] };

function AgentForm({
  org,
  initial,
  commands,
  canEdit,
  demoOnly,
}: {
  org: string;
  initial: AgentSettings;
  commands: NamedCommand[];
  canEdit: boolean;
  /** Why this account may choose the demo agent only, when it may. */
  demoOnly: string | undefined;
}) {
  const save = useSaveAgentSettings(org);
  const [agent, setAgent] = useState(initial.agent);
  // With agent `acp`, which agent that speaks the Agent Client Protocol.
  const [acpAgent, setAcpAgent] = useState(initial.acpAgent);
  const [commandName, setCommandName] = useState(initial.commandName ?? commands[0]?.name ?? '');
  const [timeout, setTimeoutSeconds] = useState(initial.timeoutMs ? String(initial.timeoutMs / 1000) : '');
  const error = save.error instanceof ApiError ? save.error : null;
  const chosen = commands.find((c) => c.name === commandName);
  const kinds = useAgentKinds();
  const realAgents = kinds.data?.agents.filter((k) => k.kind !== 'demo' && k.kind !== 'command') ?? [];
  const isChosen = (info: AgentKindInfo) =>
    agent === info.kind && (info.kind !== 'acp' || acpAgent === info.acpAgent);
  const timeoutMs = timeout.trim() ? { timeoutMs: Math.round(Number(timeout) * 1000) } : {};

  const [approvals, setApprovals] = useState<ApprovalMode>(initial.approvals ?? 'auto');
  const [approvalTimeout, setApprovalTimeout] = useState(
    initial.approvalTimeoutSeconds === undefined ? '' : String(initial.approvalTimeoutSeconds),
  );

  function submit(event: FormEvent) {
    event.preventDefault();
    // The network setting (its own section) stays as it is; asking goes with every agent.
    const kept = {
      ...(initial.allowedHosts ? { allowedHosts: initial.allowedHosts } : {}),
      // The approval rules (Settings › Approvals) stay as they are.
      ...(initial.approvalRules ? { approvalRules: initial.approvalRules } : {}),
      approvals,
      ...(approvalTimeout.trim() ? { approvalTimeoutSeconds: Number(approvalTimeout) } : {}),
    };
    if (agent === 'demo') {
      save.mutate({ agent: 'demo', ...kept });
      return;
    }
    if (agent === 'acp') {
      save.mutate({ agent, ...(acpAgent ? { acpAgent } : {}), ...timeoutMs, ...kept });
      return;
    }
    if (agent !== 'command') {
      save.mutate({ agent, ...timeoutMs, ...kept });
      return;
    }
    save.mutate({ agent: 'command', commandName, ...timeoutMs, ...kept });
  }

  return (
    <form className="stack card" onSubmit={submit}>
      <fieldset className="stack" disabled={!canEdit}>
        <legend className="visually-hidden">Agent</legend>
        <label className="checkbox">
          <input
            type="radio"
            name="agent"
            value="demo"
            checked={agent === 'demo'}
            onChange={() => setAgent('demo')}
          />{' '}
          Demo agent (simulated: offline, built in, no model; works in a clone of a sample project)
        </label>
        {demoOnly && (
          <p id="demo-only-note" className="muted small">
            {demoOnly}
          </p>
        )}
        {kinds.isPending ? (
          <Loading label="Looking for the agents installed here" />
        ) : (
          <InstalledAgents
            agents={realAgents}
            isChosen={isChosen}
            locked={demoOnly !== undefined}
            onChoose={(info) => {
              setAgent(info.kind);
              setAcpAgent(info.acpAgent);
            }}
          />
        )}
        <label className="checkbox">
          <input
            type="radio"
            name="agent"
            value="command"
            checked={agent === 'command'}
            disabled={demoOnly !== undefined && agent !== 'command'}
            aria-describedby={demoOnly ? 'demo-only-note' : undefined}
            onChange={() => setAgent('command')}
          />{' '}
          A local agent command the administrator defined
        </label>
        {agent === 'command' && (
          <>
            {commands.length === 0 ? (
              <p className="muted small">
                No agent commands are defined yet. The administrator of this installation defines them with{' '}
                <code>npx sessiondesk agent-command set NAME -- program args…</code>.
              </p>
            ) : (
              <div className="stack">
                <label htmlFor="agent-command-name">Command</label>
                <select
                  id="agent-command-name"
                  value={commandName}
                  onChange={(e) => setCommandName(e.target.value)}
                  aria-describedby="agent-command-hint"
                >
                  {commands.map((c) => (
                    <option key={c.name} value={c.name}>
                      {c.name}
                    </option>
                  ))}
                </select>
                {chosen && <code className="small">{chosen.command.join(' ')}</code>}
                {error?.fieldError('body.commandName') && (
                  <span className="form-error">{error.fieldError('body.commandName')}</span>
                )}
                <span id="agent-command-hint" className="muted small">
                  Defined by the administrator (only they choose which programs run). It runs in the
                  session&apos;s sandbox, without a shell.
                </span>
              </div>
            )}
          </>
        )}
        <MissingAgents agents={realAgents.filter((info) => !offered(info, isChosen))} />
        {agent !== 'demo' && (
          <TextField
            label="Time limit (seconds)"
            inputMode="numeric"
            value={timeout}
            onChange={(e) => setTimeoutSeconds(e.target.value)}
            error={error?.fieldError('body.timeoutMs')}
            hint="Default 1800."
          />
        )}
      </fieldset>
      <fieldset className="stack" disabled={!canEdit} aria-describedby="approvals-hint">
        <legend className="approvals-legend">Before agents act</legend>
        <label className="checkbox">
          <input
            type="radio"
            name="approvals"
            value="auto"
            checked={approvals === 'auto'}
            onChange={() => setApprovals('auto')}
          />{' '}
          Let agents act: every tool call runs inside the session&apos;s sandbox
        </label>
        <label className="checkbox">
          <input
            type="radio"
            name="approvals"
            value="ask"
            checked={approvals === 'ask'}
            onChange={() => setApprovals('ask')}
          />{' '}
          Ask first: what an agent asks before it acts waits in the Inbox for a member to decide
        </label>
        {approvals === 'ask' && (
          <TextField
            label="Time to decide (seconds)"
            inputMode="numeric"
            value={approvalTimeout}
            onChange={(e) => setApprovalTimeout(e.target.value)}
            error={error?.fieldError('body.approvalTimeoutSeconds')}
            hint={`Default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS} (30 minutes), from 5 to 86400: a request no one decides in time is rejected.`}
          />
        )}
        <p id="approvals-hint" className="muted small">
          Claude Code, the ACP agents and the demo agent ask (before each edit and each command); the Codex
          and Gemini CLI kinds and commands cannot, and run unattended. Applies to runs started afterwards.{' '}
          {initial.approvalRules
            ? `${initial.approvalRules.length === 1 ? 'One approval rule decides' : `${initial.approvalRules.length} approval rules decide`} first`
            : 'Approval rules may decide first'}
          : <Link to="/settings/approvals">Settings › Approvals</Link>.
        </p>
      </fieldset>
      {error && error.details.length === 0 && (
        <p className="form-error" role="alert">
          {error.message}
        </p>
      )}
      {save.isSuccess && (
        <p className="muted small" role="status">
          Saved. New sessions and follow-ups use it.
        </p>
      )}
      {canEdit ? (
        <div className="form-actions">
          <button
            type="submit"
            className="button button-primary"
            disabled={save.isPending || (agent === 'command' && !chosen)}
          >
            Save
          </button>
        </div>
      ) : (
        <p className="muted small">Only owners can change the agent.</p>
      )}
    </form>
  );
}

export function AgentPage() {
  const { workspace } = useWorkspace();
  const query = useAgentSettings(workspace.organizationId);
  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>Agent</h1>
      </header>
      <p className="muted">Which agent works on the sessions of {workspace.name}.</p>
      {query.isPending ? (
        <Loading label="Loading the agent setting" />
      ) : query.isError ? (
        <ErrorState error={query.error} onRetry={() => void query.refetch()} />
      ) : (
        <>
          <p className="small">{SOURCE_NOTE[query.data.source]}</p>
          {/* Keyed by workspace only: a save must not remount the form and lose its "Saved" note. */}
          <AgentForm
            key={workspace.organizationId}
            org={workspace.organizationId}
            initial={query.data.settings}
            commands={query.data.commands}
            canEdit={workspace.role === 'owner'}
            demoOnly={query.data.demoOnly}
          />
          {/* A new agent saved is a new check: the last one's answer was about the one before. */}
          <AgentCheckSection
            key={`check-${workspace.organizationId}-${query.data.settings.agent}-${query.data.settings.acpAgent ?? ''}-${query.data.settings.commandName ?? ''}`}
            org={workspace.organizationId}
            canCheck={workspace.role === 'owner'}
          />
          <SandboxSection sandbox={query.data.sandbox} />
          <NetworkSection
            key={`network-${workspace.organizationId}`}
            org={workspace.organizationId}
            settings={query.data.settings}
            source={query.data.source}
            enforced={query.data.networkEnforced}
            problem={query.data.networkProblem}
            canEdit={workspace.role === 'owner'}
          />
        </>
      )}
    </div>
  );
}
