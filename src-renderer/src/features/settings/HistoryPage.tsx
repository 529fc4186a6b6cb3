import { useState, type FormEvent } from 'react';
import { HISTORY_KIND_NAMES as KIND_NAMES, type HistorySource } from '../../../../src-shared/history';
import { HISTORY_KINDS, type HistoryKind } from '../../../../src-shared/sessions';
import {
  useMe,
  useAddHistorySource,
  useHistorySources,
  usePauseHistorySource,
  useRemoveHistorySource,
} from '../../api/queries';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { TextField } from '../../components/Field';
import { RelativeTime } from '../../components/RelativeTime';
import { EmptyState, ErrorState, Loading } from '../../components/States';
import { useWorkspace } from '../../lib/workspace';

const DEFAULT_ROOTS: Record<HistoryKind, string> = {
  'claude-code': '~/.claude',
  codex: '~/.codex',
  gemini: '~/.gemini',
  'qwen-code': '~/.qwen',
  opencode: '~/.local/share/opencode',
};

/** Settings › History: the agent CLI folders this workspace imports and follows. */
export function HistoryPage() {
  const { workspace } = useWorkspace();
  const org = workspace.organizationId;
  const isOwner = workspace.role === 'owner';
  // Which folders of the machine are read is the administrator's decision (the server's rule).
  const me = useMe();
  const mayAdd = isOwner && me.data?.administrator === true;
  const sources = useHistorySources(org);
  const add = useAddHistorySource(org);
  const pause = usePauseHistorySource(org);
  const remove = useRemoveHistorySource(org);
  const [kind, setKind] = useState<HistoryKind>('claude-code');
  const [rootDir, setRootDir] = useState('');
  const [removing, setRemoving] = useState<HistorySource | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (rootDir.trim() === '') return;
    add.mutate({ kind, rootDir: rootDir.trim() }, { onSuccess: () => setRootDir('') });
  }

  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>History</h1>
      </header>
      <p className="muted">
        Sessions you ran in a terminal with Claude Code, Codex or Gemini CLI, imported from the folders those
        programs keep them in and followed as they grow. Their files are only read, never changed.
      </p>
      {isOwner && !mayAdd && (
        <p className="muted">
          Only the administrator of this Session Desk (the account made at first-run setup) adds folders of
          this machine here, or anyone with <code>sessiondesk history import</code> on it.
        </p>
      )}
      {mayAdd && (
        <form className="inline-form" onSubmit={submit} noValidate>
          <div className="field field-choice">
            <label htmlFor="history-kind">Program</label>
            <select id="history-kind" value={kind} onChange={(e) => setKind(e.target.value as HistoryKind)}>
              {HISTORY_KINDS.map((k) => (
                <option key={k} value={k}>
                  {KIND_NAMES[k]}
                </option>
              ))}
            </select>
          </div>
          <TextField
            label="Folder"
            placeholder={`${KIND_NAMES[kind]}'s folder, e.g. ${DEFAULT_ROOTS[kind]} or its full path`}
            value={rootDir}
            required
            onChange={(e) => setRootDir(e.target.value)}
          />
          <button type="submit" className="button button-primary" disabled={add.isPending}>
            Add source
          </button>
        </form>
      )}
      {mayAdd && sources.data && sources.data.found.length > 0 && (
        <section className="stack card" aria-labelledby="found-heading">
          <h2 id="found-heading">Found on this machine</h2>
          <p className="muted small">
            Where these programs keep their sessions by default, as the agents&apos; environment sets it.
          </p>
          <ul className="found-folders">
            {sources.data.found.map((folder) => (
              <li key={`${folder.kind}:${folder.rootDir}`}>
                <span>
                  {KIND_NAMES[folder.kind]} <code>{folder.rootDir}</code>
                </span>
                <button
                  type="button"
                  className="button button-small"
                  disabled={add.isPending}
                  onClick={() => add.mutate({ kind: folder.kind, rootDir: folder.rootDir })}
                >
                  Add<span className="visually-hidden"> {folder.rootDir}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      {add.error && (
        <p className="form-error" role="alert">
          {add.error.message}
        </p>
      )}
      {sources.isPending ? (
        <Loading label="Loading history sources" />
      ) : sources.isError ? (
        <ErrorState error={sources.error} onRetry={() => void sources.refetch()} />
      ) : sources.data.sources.length === 0 ? (
        <EmptyState title="No history sources">
          {sources.data.importCommand === undefined ? (
            <p>
              {mayAdd ? "Add a folder of this server's machine above. " : ''}Sessions run in a terminal on a
              desktop come here from it with <code>sessiondesk push</code>.
            </p>
          ) : (
            <p>
              {mayAdd ? 'Add a folder above, or run' : 'On this machine, run'}{' '}
              <code>{sources.data.importCommand}</code>.
            </p>
          )}
        </EmptyState>
      ) : (
        <table className="table">
          <caption className="visually-hidden">History sources of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Program</th>
              <th scope="col">Folder</th>
              <th scope="col">Sessions</th>
              <th scope="col">Messages</th>
              <th scope="col">Last import</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sources.data.sources.map((source) => (
              <tr key={source.id}>
                <td>
                  {KIND_NAMES[source.kind]}
                  {source.paused && <span className="badge"> Paused</span>}
                </td>
                <td>
                  <code>{source.rootDir}</code>
                </td>
                <td>{source.sessions.toLocaleString('en-US')}</td>
                <td>{source.messages.toLocaleString('en-US')}</td>
                <td>
                  {source.lastImportAt ? (
                    <RelativeTime iso={source.lastImportAt} />
                  ) : (
                    <span className="muted">Not yet</span>
                  )}
                </td>
                <td>
                  {isOwner && (
                    <>
                      <button
                        type="button"
                        className="button button-small"
                        onClick={() => pause.mutate({ id: source.id, paused: !source.paused })}
                      >
                        {source.paused ? 'Resume' : 'Pause'}
                        <span className="visually-hidden"> {source.rootDir}</span>
                      </button>{' '}
                      <button
                        type="button"
                        className="button button-small button-danger"
                        onClick={() => setRemoving(source)}
                      >
                        Remove<span className="visually-hidden"> {source.rootDir}</span>
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        open={removing !== null}
        title="Remove this source?"
        body={`Session Desk stops following ${removing?.rootDir ?? 'it'}. The sessions already imported stay, and the folder's files are not touched.`}
        confirmLabel="Remove source"
        onCancel={() => setRemoving(null)}
        onConfirm={() => {
          if (removing) remove.mutate(removing.id);
          setRemoving(null);
        }}
      />
    </div>
  );
}
