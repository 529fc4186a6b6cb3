import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { modelsFor } from '../../../../src-shared/agent-models';
import type { AgentKindInfo, AgentSettings } from '../../../../src-shared/accounts';
import { DEFAULT_BASE_BRANCH } from '../../../../src-shared/constants';
import { ApiError } from '../../api/client';
import { useAgentKinds, useAgentSettings, useCreateSession } from '../../api/queries';
import { TextArea, TextField } from '../../components/Field';
import { agentNameOf } from '../../lib/agent-names';
import { useWorkspace } from '../../lib/workspace';

/** The agent's name as the form says it: "Codex", "OpenCode", `the command "my-agent"`. */
function agentName(settings: AgentSettings | undefined, kinds: readonly AgentKindInfo[] | undefined): string {
  if (!settings) return 'the agent';
  if (settings.agent !== 'command') return agentNameOf(settings.agent, settings.acpAgent, kinds);
  return settings.commandName ? `the command "${settings.commandName}"` : "the server's agent command";
}

/**
 * The models the workspace's agent takes: a list, and free entry where the agent allows it.
 * Left empty, the agent runs with its own default; the demo runs no model at all.
 */
function ModelField({
  settings,
  installedVersion,
  kinds,
  value,
  onChange,
  error,
}: {
  settings: AgentSettings | undefined;
  installedVersion: string | undefined;
  kinds: readonly AgentKindInfo[] | undefined;
  value: string;
  onChange: (model: string) => void;
  error: string | undefined;
}) {
  const kind = settings?.agent ?? 'demo';
  const { models, freeEntry, checkedWith } = modelsFor(kind);
  if (kind === 'demo') return null;
  const name = agentName(settings, kinds);
  const ownDefault = kind === 'command' ? 'None' : `${name}'s own default`;
  // The list is the one of the CLI version it was taken from; another version may know others.
  const listedFor =
    checkedWith && installedVersion && !installedVersion.includes(checkedWith)
      ? ` Listed for ${name} ${checkedWith}; this server has ${installedVersion}.`
      : '';
  if (freeEntry) {
    return (
      <>
        <TextField
          label="Model"
          list={models.length > 0 ? 'model-options' : undefined}
          value={value}
          placeholder={ownDefault}
          onChange={(e) => onChange(e.target.value)}
          error={error}
          hint={
            kind === 'command'
              ? 'Optional. Given to the command as {model}, which stays empty without one.'
              : `Optional. Left empty, ${name} uses its own default.${listedFor}`
          }
        />
        {models.length > 0 && (
          <datalist id="model-options">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        )}
      </>
    );
  }
  return (
    <div className="field">
      <label htmlFor="model-select">Model</label>
      <select
        id="model-select"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={listedFor ? 'model-select-note' : undefined}
      >
        <option value="">{ownDefault}</option>
        {models.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : (
        listedFor && (
          <p id="model-select-note" className="field-hint">
            {listedFor.trim()}
          </p>
        )
      )}
    </div>
  );
}

interface Draft {
  initialMessage: string;
  repoUrl: string;
  baseBranch: string;
}

const EMPTY_DRAFT: Draft = { initialMessage: '', repoUrl: '', baseBranch: DEFAULT_BASE_BRANCH };

function readDraft(key: string): Draft {
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) ?? 'null') as Partial<Draft> | null;
    if (!saved) return EMPTY_DRAFT;
    return {
      initialMessage: typeof saved.initialMessage === 'string' ? saved.initialMessage : '',
      repoUrl: typeof saved.repoUrl === 'string' ? saved.repoUrl : '',
      baseBranch: typeof saved.baseBranch === 'string' ? saved.baseBranch : DEFAULT_BASE_BRANCH,
    };
  } catch {
    return EMPTY_DRAFT;
  }
}

export function NewSessionPage() {
  const { workspace } = useWorkspace();
  const agent = useAgentSettings(workspace.organizationId);
  const settings = agent.data?.settings;
  const kinds = useAgentKinds();
  const installed = kinds.data?.agents.find(
    (k) => k.kind === settings?.agent && (k.kind !== 'acp' || k.acpAgent === settings.acpAgent),
  );
  const create = useCreateSession();
  const navigate = useNavigate();
  // The draft is kept in this tab until the session starts: a reload (or the page drawn again)
  // does not lose a prompt being written.
  const draftKey = `sessiondesk.new-session.${workspace.organizationId}`;
  const [form, setFormState] = useState(() => readDraft(draftKey));
  const setForm = (next: Draft) => {
    setFormState(next);
    sessionStorage.setItem(draftKey, JSON.stringify(next));
  };
  // Empty until the person picks one: the server then gives the agent none (the demo its own).
  const [model, setModel] = useState('');
  const [promptMissing, setPromptMissing] = useState(false);
  const error = create.error instanceof ApiError ? create.error : null;
  const set = (field: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [field]: e.target.value });

  function submit(event: FormEvent) {
    event.preventDefault();
    // The API refuses a blank prompt too; saying so here keeps the person on the form.
    if (form.initialMessage.trim() === '') {
      setPromptMissing(true);
      (event.currentTarget as HTMLFormElement).querySelector('textarea')?.focus();
      return;
    }
    create.mutate(
      {
        organizationId: workspace.organizationId,
        initialMessage: form.initialMessage,
        ...(form.repoUrl.trim() ? { repoUrl: form.repoUrl.trim(), baseBranch: form.baseBranch.trim() } : {}),
        ...(model.trim() ? { model: model.trim() } : {}),
      },
      {
        onSuccess: ({ session }) => {
          sessionStorage.removeItem(draftKey);
          void navigate(`/sessions/${session.id}`);
        },
      },
    );
  }

  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>New session</h1>
      </header>
      <p className="muted">
        In {workspace.name}. The agent clones the repository, works on the prompt and reports back here.
      </p>
      {settings && (
        <p className="new-session-agent">
          {settings.agent === 'demo' ? (
            <>
              Runs with the <strong>demo agent</strong>: a simulated run, no real agent or model.{' '}
            </>
          ) : (
            <>
              Runs with <strong>{agentName(settings, kinds.data?.agents)}</strong>, this workspace's
              agent.{' '}
            </>
          )}
          <Link to="/settings/agent">Change the agent</Link>
        </p>
      )}
      <form className="stack" onSubmit={submit} noValidate>
        <TextArea
          label="Prompt"
          rows={6}
          placeholder="What should the agent do?"
          value={form.initialMessage}
          onChange={(e) => {
            setForm({ ...form, initialMessage: e.target.value });
            if (e.target.value.trim() !== '') setPromptMissing(false);
          }}
          error={
            promptMissing
              ? 'Write a prompt: the agent needs something to work on.'
              : error?.fieldError('body.initialMessage')
          }
          required
          autoFocus
        />
        <TextField
          label="Repository URL"
          placeholder="https://github.com/owner/repo"
          value={form.repoUrl}
          onChange={set('repoUrl')}
          error={error?.fieldError('body.repoUrl')}
          hint={
            settings?.agent === 'demo'
              ? 'Optional, recorded only: the demo agent works offline in a clone of its sample project.'
              : 'Optional. https://<host>/<owner>/<repo>'
          }
        />
        <div className="field-row">
          <TextField
            label="Base branch"
            value={form.baseBranch}
            onChange={set('baseBranch')}
            error={error?.fieldError('body.baseBranch')}
          />
          <ModelField
            settings={settings}
            installedVersion={installed?.version}
            kinds={kinds.data?.agents}
            value={model}
            onChange={setModel}
            error={error?.fieldError('body.model')}
          />
        </div>
        {error && error.details.length === 0 && (
          <p className="form-error" role="alert">
            {error.message}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            {create.isPending ? 'Starting…' : 'Start session'}
          </button>
        </div>
      </form>
    </div>
  );
}
