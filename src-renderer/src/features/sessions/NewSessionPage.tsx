import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { DEFAULT_BASE_BRANCH, DEFAULT_MODEL } from '../../../../src-shared/constants';
import { ApiError } from '../../api/client';
import { useCreateSession } from '../../api/queries';
import { TextArea, TextField } from '../../components/Field';
import { useWorkspace } from '../../lib/workspace';

export function NewSessionPage() {
  const { workspace } = useWorkspace();
  const create = useCreateSession();
  const navigate = useNavigate();
  const [form, setForm] = useState({
    initialMessage: '',
    repoUrl: '',
    baseBranch: DEFAULT_BASE_BRANCH,
    model: DEFAULT_MODEL,
  });
  const error = create.error instanceof ApiError ? create.error : null;
  const set = (field: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [field]: e.target.value });

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      {
        organizationId: workspace.organizationId,
        ...(form.initialMessage.trim() ? { initialMessage: form.initialMessage } : {}),
        ...(form.repoUrl.trim() ? { repoUrl: form.repoUrl.trim(), baseBranch: form.baseBranch.trim() } : {}),
        ...(form.model.trim() ? { model: form.model.trim() } : {}),
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
          onChange={set('initialMessage')}
          error={error?.fieldError('body.initialMessage')}
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
          <TextField
            label="Model"
            value={form.model}
            onChange={set('model')}
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
