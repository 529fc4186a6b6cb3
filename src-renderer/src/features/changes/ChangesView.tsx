import { Fragment, useEffect, useState, type KeyboardEvent } from 'react';
import { CHANGES_LIMITS, type ChangedFile, type SessionChanges } from '../../../../src-shared/changes';
import type { ReviewSide } from '../../../../src-shared/review';
import { useSessionChanges } from '../../api/queries';
import { RelativeTime } from '../../components/RelativeTime';
import { useShortcuts } from '../../lib/use-shortcut';
import { CommentCard, CommentForm, linesText, ReviewBar, ReviewKeys } from './ReviewComments';
import { useReview, type LineRange, type PlacedComment, type Review } from './use-review';
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

/** A line number of one side: a button that picks the line for a comment (none where the line has no number). */
function LineNumber({
  path,
  side,
  number,
  hunk,
  first,
  review,
}: {
  path: string;
  side: ReviewSide;
  number: number | undefined;
  hunk: number;
  first: boolean;
  review: Review;
}) {
  if (number === undefined) return <span className="patch-number" aria-hidden="true" />;
  const pick = { path, side, number, hunk };
  return (
    <button
      type="button"
      className="patch-number"
      data-side={side}
      // One stop per column in the tab order: the arrow keys go on from there.
      tabIndex={first ? 0 : -1}
      aria-label={`Comment on ${side === 'old' ? 'base ' : ''}line ${number} of ${path}`}
      onPointerDown={(e) => {
        if (e.button !== 0) return;
        e.preventDefault();
        review.pointerDown(pick, e.shiftKey);
      }}
      onPointerEnter={() => review.pointerEnter(pick)}
      // A click from the keyboard (Enter, Space); the pointer's was handled as it was pressed.
      onClick={(e) => e.detail === 0 && review.keyboardPick(pick, e.shiftKey)}
    >
      {number}
    </button>
  );
}

/** Up and down move between the line numbers of a column. */
function moveBetweenNumbers(event: KeyboardEvent<HTMLDivElement>) {
  const target = event.target as HTMLElement;
  if ((event.key !== 'ArrowDown' && event.key !== 'ArrowUp') || !target.matches('button.patch-number'))
    return;
  const column = [
    ...event.currentTarget.querySelectorAll<HTMLButtonElement>(
      `button.patch-number[data-side="${target.dataset.side}"]`,
    ),
  ];
  const next = column[column.indexOf(target as HTMLButtonElement) + (event.key === 'ArrowDown' ? 1 : -1)];
  if (!next) return;
  event.preventDefault();
  next.focus();
}

/** The comments to show after a line: those on it, and the one being written for the lines that end there. */
function Thread({
  comments,
  review,
  writingHere,
}: {
  comments: PlacedComment[];
  review: Review;
  writingHere: LineRange | null;
}) {
  if (comments.length === 0 && !writingHere) return null;
  return (
    <div className="review-thread">
      {comments.map((c) => (
        <CommentCard key={c.key} placed={c} review={review} id={commentId(c)} />
      ))}
      {writingHere && (
        <CommentForm
          label={`Comment on ${linesText({ side: writingHere.side, startLine: writingHere.startLine, endLine: writingHere.line })}`}
          onSave={(body) => review.saveWriting(body)}
          onCancel={() => review.cancelWriting()}
        />
      )}
    </div>
  );
}

export const commentId = (c: PlacedComment) => `review-${c.key}`;

function Patch({ file, review }: { file: ChangedFile; review: Review }) {
  if (file.patch === undefined) {
    return (
      <p className="change-note" role="note">
        Diff not shown: this page already holds {byteSize(CHANGES_LIMITS.totalPatchBytes)} of diffs. The line
        counts above are exact; see the file in the session&apos;s sandbox.
      </p>
    );
  }
  const lines = patchLines(file.patch);
  const here = review.placed.filter((c) => c.path === file.path);
  const at = (side: ReviewSide, line: number | undefined) =>
    line === undefined ? [] : here.filter((c) => c.side === side && c.line === line);
  const writing =
    review.writing && 'path' in review.writing && review.writing.path === file.path ? review.writing : null;
  const marked = review.picking?.path === file.path ? review.picking : writing;
  const inRange = (side: ReviewSide, line: number | undefined) =>
    marked !== null &&
    marked.side === side &&
    line !== undefined &&
    line >= marked.startLine &&
    line <= marked.line;
  const elsewhere = here.filter((c) => c.line === null);
  // Each line's hunk, and the first number of each column (its one stop in the tab order).
  const hunks: number[] = [];
  let hunk = -1;
  for (const line of lines) {
    if (line.kind === 'hunk') hunk += 1;
    hunks.push(hunk);
  }
  const firstOld = lines.findIndex((l) => l.oldLine !== undefined);
  const firstNew = lines.findIndex((l) => l.newLine !== undefined);
  return (
    <>
      <div className="patch" role="group" aria-label={`Diff of ${file.path}`} onKeyDown={moveBetweenNumbers}>
        {lines.map((line, i) => {
          const selected = inRange('old', line.oldLine) || inRange('new', line.newLine);
          const comments = [...at('old', line.oldLine), ...at('new', line.newLine)];
          const writingHere =
            writing &&
            ((writing.side === 'new' && writing.line === line.newLine) ||
              (writing.side === 'old' && writing.line === line.oldLine))
              ? writing
              : null;
          const old = (
            <LineNumber
              path={file.path}
              side="old"
              number={line.oldLine}
              hunk={hunks[i] ?? 0}
              first={i === firstOld}
              review={review}
            />
          );
          const added = (
            <LineNumber
              path={file.path}
              side="new"
              number={line.newLine}
              hunk={hunks[i] ?? 0}
              first={i === firstNew}
              review={review}
            />
          );
          return (
            <Fragment key={i}>
              <div className={`patch-line patch-${line.kind}${selected ? ' patch-selected' : ''}`}>
                {old}
                {added}
                {line.kind === 'add' || line.kind === 'del' || line.kind === 'context' ? (
                  <span className="patch-text">
                    <span className="patch-sign">{line.text[0] ?? ' '}</span>
                    {line.text.slice(1)}
                  </span>
                ) : (
                  <span className="patch-text">{line.text}</span>
                )}
              </div>
              <Thread comments={comments} review={review} writingHere={writingHere} />
            </Fragment>
          );
        })}
      </div>
      {elsewhere.length > 0 && (
        <div className="review-elsewhere">
          <p className="small muted">Comments whose lines are no longer in this diff:</p>
          {elsewhere.map((c) => (
            <CommentCard key={c.key} placed={c} review={review} id={commentId(c)} />
          ))}
        </div>
      )}
      {file.truncated && (
        <p className="change-note" role="note">
          Diff cut at {byteSize(CHANGES_LIMITS.filePatchBytes)}: the rest of this file&apos;s diff is not
          shown. The line counts above are exact.
        </p>
      )}
    </>
  );
}

function FileRow({
  file,
  index,
  open,
  onToggle,
  review,
}: {
  file: ChangedFile;
  index: number;
  open: boolean;
  onToggle: (open: boolean) => void;
  review: Review;
}) {
  const drafts = review.placed.filter((c) => c.path === file.path && c.kind === 'draft').length;
  const sent = review.placed.filter((c) => c.path === file.path && c.kind === 'sent' && !c.resolved).length;
  return (
    <li className="change-file">
      <details open={open} onToggle={(e) => onToggle(e.currentTarget.open)}>
        <summary id={fileId(index)}>
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
          {drafts > 0 && (
            <span className="change-tag review-count">{drafts === 1 ? '1 draft' : `${drafts} drafts`}</span>
          )}
          {sent > 0 && (
            <span className="change-tag review-count">{sent === 1 ? '1 comment' : `${sent} comments`}</span>
          )}
          <Counts additions={file.additions} deletions={file.deletions} />
        </summary>
        {open && <Patch file={file} review={review} />}
      </details>
    </li>
  );
}

const fileId = (index: number) => `change-file-${index}`;

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
 * Lines are commented on here, and the comments sent to the agent as one review.
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
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  /** The file or comment the keys moved to, focused once it is drawn. */
  const [moved, setMoved] = useState<{ id: string; at: number } | null>(null);
  const changes = query.data;
  const files = changes?.available ? changes : null;
  const review = useReview({ sessionId, organizationId, updatedAt, files: files?.files ?? null, shown });

  useEffect(() => {
    if (!moved) return;
    const element = document.getElementById(moved.id);
    element?.scrollIntoView({ block: 'center' });
    element?.focus();
  }, [moved]);

  const open = (path: string) => setOpened((now) => (now.has(path) ? now : new Set([...now, path])));
  /** Shows the files, opens `path` and moves to the element `id` in it. */
  const moveTo = (id: string, path?: string) => {
    setShown(true);
    if (path !== undefined) open(path);
    setMoved({ id, at: Date.now() });
  };
  const fileIndex = () => {
    const active = document.activeElement?.closest('.change-file');
    const all = [...document.querySelectorAll('.change-files > .change-file')];
    return active ? all.indexOf(active) : -1;
  };
  const stepFile = (by: 1 | -1) => {
    const list = files?.files ?? [];
    if (list.length === 0) return;
    const next = Math.min(Math.max(fileIndex() + by, 0), list.length - 1);
    moveTo(fileId(next), list[next]!.path);
  };
  const stepComment = (by: 1 | -1) => {
    const all = review.placed;
    if (all.length === 0) return;
    const at = all.findIndex((c) => commentId(c) === document.activeElement?.id);
    const next =
      all[at < 0 ? (by === 1 ? 0 : all.length - 1) : Math.min(Math.max(at + by, 0), all.length - 1)]!;
    moveTo(commentId(next), next.path);
  };
  useShortcuts(
    files
      ? { ']': () => stepFile(1), '[': () => stepFile(-1), n: () => stepComment(1), p: () => stepComment(-1) }
      : {},
  );

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
  const listed = new Set(files?.files.map((f) => f.path));
  const gone = review.placed.filter((c) => !listed.has(c.path));

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
      <ReviewBar review={review} />
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
          {files.files.length > 0 && <ReviewKeys />}
          {review.reviewsError && (
            <p className="field-error" role="alert">
              Could not read the comments sent: {review.reviewsError.message}
            </p>
          )}
          <ul className="change-files" aria-label="Changed files">
            {files.files.map((file, index) => (
              <FileRow
                key={`${file.oldPath ?? ''}\0${file.path}`}
                file={file}
                index={index}
                open={opened.has(file.path)}
                onToggle={(isOpen) =>
                  setOpened((now) => {
                    const next = new Set(now);
                    if (isOpen) next.add(file.path);
                    else next.delete(file.path);
                    return next;
                  })
                }
                review={review}
              />
            ))}
          </ul>
        </>
      )}
      {shown && gone.length > 0 && (
        <div className="review-elsewhere">
          <p className="small muted">Comments on files no longer changed:</p>
          {gone.map((c) => (
            <div key={c.key}>
              <code className="small">{c.path}</code>
              <CommentCard placed={c} review={review} id={commentId(c)} />
            </div>
          ))}
        </div>
      )}
    </section>
  );
}
