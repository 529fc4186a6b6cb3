import { useState, type FormEvent } from 'react';
import type { ApiKeySummary, CreatedApiKey } from '../../../../src-shared/accounts';
import { useCreateKey, useKeys, useRevokeKey } from '../../api/queries';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { TextField } from '../../components/Field';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { useWorkspace } from '../../lib/workspace';

function NewKeyNotice({ created, onDismiss }: { created: CreatedApiKey; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section className="notice" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Your new API key{created.label ? `: ${created.label}` : ''}</h2>
      <p>
        <strong>Copy it now: you won’t see it again.</strong> Only a hash of it is stored.
      </p>
      <div className="copy-row">
        <code className="secret" aria-label="New API key">
          {created.key}
        </code>
        <button
          type="button"
          className="button"
          onClick={() => {
            void navigator.clipboard?.writeText(created.key).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" className="link-button" onClick={onDismiss}>
        I have stored it
      </button>
    </section>
  );
}

export function KeysPage() {
  const { workspace, me } = useWorkspace();
  // An owner revokes any key of the workspace; a member only the keys they made.
  const mayRevoke = (key: ApiKeySummary) =>
    workspace.role === 'owner' || key.createdBy?.userId === me.user.id;
  const org = workspace.organizationId;
  const keysQuery = useKeys(org);
  const create = useCreateKey(org);
  const revoke = useRevokeKey(org);
  const [label, setLabel] = useState('');
  const [labelMissing, setLabelMissing] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    // A label is what tells keys apart in the list and in the revoke dialog.
    if (label.trim() === '') {
      setLabelMissing(true);
      return;
    }
    create.mutate(label.trim(), {
      onSuccess: ({ key }) => {
        setCreated(key);
        setLabel('');
      },
    });
  }

  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>API keys</h1>
      </header>
      <p className="muted">
        {me.teamServer ? (
          <>
            Keys for scripts and for the desktops that push their sessions to{' '}
            <strong>{workspace.name}</strong> on this team server. A key cannot create sessions, keys or
            members. You can revoke the keys you made; an owner can revoke any.
          </>
        ) : (
          <>
            Keys let scripts on this machine read and update the sessions of <strong>{workspace.name}</strong>
            . A key cannot create sessions, keys or members.
          </>
        )}
      </p>
      {created && <NewKeyNotice created={created} onDismiss={() => setCreated(null)} />}
      <form className="inline-form" onSubmit={submit} noValidate>
        <TextField
          label="Label"
          placeholder="e.g. release script"
          value={label}
          required
          onChange={(e) => {
            setLabel(e.target.value);
            if (e.target.value.trim() !== '') setLabelMissing(false);
          }}
          error={labelMissing ? 'Give the key a label, e.g. what script uses it.' : undefined}
        />
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Create key
        </button>
      </form>
      {create.error && (
        <p className="form-error" role="alert">
          {create.error.message}
        </p>
      )}
      {revoke.error && (
        <p className="form-error" role="alert">
          {revoke.error.message}
        </p>
      )}
      {keysQuery.isPending ? (
        <Loading label="Loading keys" />
      ) : keysQuery.isError ? (
        <ErrorState error={keysQuery.error} onRetry={() => void keysQuery.refetch()} />
      ) : keysQuery.data.keys.length === 0 ? (
        <EmptyState title="No API keys">
          <p>Create one above to call the API from a script.</p>
        </EmptyState>
      ) : (
        <table className="table">
          <caption className="visually-hidden">API keys of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Created by</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keysQuery.data.keys.map((key) => (
              <tr key={key.id}>
                <td>{key.label || <span className="muted">No label</span>}</td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>
                  <RelativeTime iso={key.createdAt} />
                </td>
                <td>{key.createdBy ? key.createdBy.name : <span className="muted">Command line</span>}</td>
                <td>
                  {key.lastUsedAt ? (
                    <RelativeTime iso={key.lastUsedAt} />
                  ) : (
                    <span className="muted">Never</span>
                  )}
                </td>
                <td>
                  {mayRevoke(key) ? (
                    <button
                      type="button"
                      className="button button-small button-danger"
                      onClick={() => setRevoking(key)}
                    >
                      Revoke<span className="visually-hidden"> {key.label || key.prefix}</span>
                    </button>
                  ) : (
                    <span className="muted small" title="Only an owner, or whoever made a key, can revoke it">
                      Owner revokes
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        body={`Scripts using ${revoking?.label || revoking?.prefix || 'it'} will get 401 from their next request. This cannot be undone.`}
        confirmLabel="Revoke key"
        onCancel={() => setRevoking(null)}
        onConfirm={() => {
          if (revoking) revoke.mutate(revoking.id);
          setRevoking(null);
        }}
      />
    </div>
  );
}
