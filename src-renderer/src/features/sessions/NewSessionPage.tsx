import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { modelsFor } from '../../../../src-shared/agent-models';
import { DEFAULT_BASE_BRANCH } from '../../../../src-shared/constants';
import { ApiError } from '../../api/client';
import { useAgentSettings, useCreateSession } from '../../api/queries';
import { TextArea, TextField } from '../../components/Field';
import { useWorkspace } from '../../lib/workspace';

/** The models the workspace's agent takes: a list, and free entry where the agent allows it. */
function ModelField({
  kind,
  value,
  onChange,
  error,
}: {
  kind: string;
  value: string;
  onChange: (model: string) => void;
  error: string | undefined;
}) {
  const { models, freeEntry } = modelsFor(kind);
  if (freeEntry) {
    return (
      <>
        <TextField
          label="Model"
          list="model-options"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          error={error}
          hint="Passed to the agent as it is."
        />
        <datalist id="model-options">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
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
      >
        {models.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function NewSessionPage() {
  const { workspace } = useWorkspace();
  const agent = useAgentSettings(workspace.organizationId);
  const kind = agent.data?.settings.agent ?? 'demo';
  const create = useCreateSession();
  const navigate = useNavigate();
  const [form, setForm] = useState({ initialMessage: '', repoUrl: '', baseBranch: DEFAULT_BASE_BRANCH });
  // Until the person picks one, the model is the agent's default (known once its setting is).
  const [model, setModel] = useState<string | null>(null);
  const chosenModel = model ?? modelsFor(kind).defaultModel;
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
        ...(chosenModel.trim() ? { model: chosenModel.trim() } : {}),
      },
      { onSuccess: ({ session }) => void navigate(`/sessions/${session.id}`) },
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
          hint="Optional. https://<host>/<owner>/<repo>"
        />
        <div className="field-row">
          <TextField
            label="Base branch"
            value={form.baseBranch}
            onChange={set('baseBranch')}
            error={error?.fieldError('body.baseBranch')}
          />
          <ModelField
            kind={kind}
            value={chosenModel}
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
