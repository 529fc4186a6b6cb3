import { useState } from 'react';
import { CHANGES_LIMITS, type ChangedFile, type SessionChanges } from '../../../../src-shared/changes';
import { useSessionChanges } from '../../api/queries';
import { RelativeTime } from '../../components/RelativeTime';
import { patchLines } from '../../../../src-shared/patch-lines';
import { byteSize } from './byte-size';
import './changes.css';

const STATUS_MARK: Record<ChangedFile['status'], string> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
};

function Counts({ additions, deletions }: { additions: number; deletions: number }) {
  return (
    <span className="change-counts">
      <span className="change-add" aria-label={`${additions} lines added`}>
        +{additions.toLocaleString()}
      </span>{' '}
      <span className="change-del" aria-label={`${deletions} lines removed`}>
        −{deletions.toLocaleString()}
      </span>
    </span>
  );
}

function Patch({ file }: { file: ChangedFile }) {
  if (file.patch === undefined) {
    return (
      <p className="change-note" role="note">
        Diff not shown: this page already holds {byteSize(CHANGES_LIMITS.totalPatchBytes)} of diffs. The line
        counts above are exact; see the file in the session&apos;s sandbox.
      </p>
    );
  }
  const lines = patchLines(file.patch);
  return (
    <>
      <pre className="patch" aria-label={`Diff of ${file.path}`}>
        {lines.map((line, i) => (
          <span key={i} className={`patch-line patch-${line.kind}`}>
            <span className="patch-number" aria-hidden="true">
              {line.oldLine ?? ''}
            </span>
            <span className="patch-number" aria-hidden="true">
              {line.newLine ?? ''}
            </span>
            {line.kind === 'add' || line.kind === 'del' || line.kind === 'context' ? (
              <span className="patch-text">
                <span className="patch-sign">{line.text[0] ?? ' '}</span>
                {line.text.slice(1)}
              </span>
            ) : (
              <span className="patch-text">{line.text}</span>
            )}
          </span>
        ))}
      </pre>
      {file.truncated && (
        <p className="change-note" role="note">
          Diff cut at {byteSize(CHANGES_LIMITS.filePatchBytes)}: the rest of this file&apos;s diff is not
          shown. The line counts above are exact.
        </p>
      )}
    </>
  );
}

function FileRow({ file }: { file: ChangedFile }) {
  const [open, setOpen] = useState(false);
  return (
    <li className="change-file">
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          <span className={`change-status change-status-${file.status}`} title={file.status}>
            {STATUS_MARK[file.status]}
          </span>
          <span className="change-path">
            {file.oldPath !== undefined && <span className="muted">{file.oldPath} → </span>}
            {file.path}
          </span>
          <span className="visually-hidden"> ({file.status})</span>
          {file.kind !== 'file' && <span className="change-tag">{file.kind}</span>}
          {file.binary && <span className="change-tag">binary</span>}
          {file.truncated && <span className="change-tag change-tag-cut">truncated</span>}
          <Counts additions={file.additions} deletions={file.deletions} />
        </summary>
        {open && <Patch file={file} />}
      </details>
    </li>
  );
}

function Summary({ changes }: { changes: SessionChanges }) {
  const { totals } = changes;
  return (
    <span className="muted">
      {totals.files === 0 ? (
        'No changes'
      ) : (
        <>
          {totals.files.toLocaleString()} {totals.files === 1 ? 'file' : 'files'} ·{' '}
          <Counts additions={totals.additions} deletions={totals.deletions} />
        </>
      )}{' '}
      against <code>{changes.base.branch}</code>
    </span>
  );
}

/** The server's message, with the folder it names (an imported session's own) set as a path. */
function FolderNamed({ message, folder }: { message: string; folder?: string | undefined }) {
  const at = folder === undefined ? -1 : message.indexOf(folder);
  if (folder === undefined || at < 0) return <>{message}</>;
  return (
    <>
      {message.slice(0, at)}
      <code>{folder}</code>
      {message.slice(at + folder.length)}
    </>
  );
}

/**
 * What the session's agent changed in its sandbox, against the base branch: committed and
 * uncommitted, file by file, each with its diff on demand. Read fresh as the session moves.
 */
export function ChangesView({
  sessionId,
  organizationId,
  updatedAt,
}: {
  sessionId: string;
  organizationId: string;
  updatedAt: string;
}) {
  const query = useSessionChanges(sessionId, organizationId, updatedAt);
  const [shown, setShown] = useState(false);
  const changes = query.data;

  let body;
  if (query.isPending) {
    body = <span className="muted">Reading the sandbox…</span>;
  } else if (!changes) {
    body = (
      <span className="field-error" role="alert">
        Could not read the changes: {query.error?.message ?? 'unknown error'}
      </span>
    );
  } else if (!changes.available) {
    body = (
      <span className="muted">
        <FolderNamed message={changes.message} folder={changes.folder} />
      </span>
    );
  } else {
    body = <Summary changes={changes} />;
  }
  const files = changes?.available ? changes : null;

  return (
    <section className="changes" aria-labelledby="changes-heading">
      <div className="changes-head">
        <h2 id="changes-heading">Changes</h2>
        {body}
        {files && files.totals.files > 0 && (
          <button
            type="button"
            className="button button-small"
            aria-expanded={shown}
            onClick={() => setShown(!shown)}
          >
            {shown ? 'Hide files' : 'Show files'}
          </button>
        )}
        {files && (
          <span className="muted small changes-time">
            read <RelativeTime iso={files.computedAt} />
          </span>
        )}
        <button
          type="button"
          className="button button-small"
          disabled={query.isFetching}
          onClick={() => void query.refetch()}
        >
          {query.isFetching ? 'Reading…' : 'Refresh'}
        </button>
      </div>
      {files && shown && (
        <>
          {files.truncated && (
            <p className="change-note" role="note">
              Some diffs are cut or left out: at most {byteSize(CHANGES_LIMITS.filePatchBytes)} per file,{' '}
              {byteSize(CHANGES_LIMITS.totalPatchBytes)} in all and {CHANGES_LIMITS.files.toLocaleString()}{' '}
              files are shown.
              {files.totals.files > files.files.length &&
                ` ${(files.totals.files - files.files.length).toLocaleString()} more files are counted in the totals only.`}
            </p>
          )}
          <ul className="change-files" aria-label="Changed files">
            {files.files.map((file) => (
              <FileRow key={`${file.oldPath ?? ''}\0${file.path}`} file={file} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
