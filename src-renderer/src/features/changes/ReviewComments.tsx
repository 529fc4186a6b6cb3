import { useState, type FormEvent } from 'react';
import { REVIEW_LIMITS } from '../../../../src-shared/review';
import { ApiError } from '../../api/client';
import { RelativeTime } from '../../components/RelativeTime';
import type { PlacedComment, Review } from './use-review';

/** "line 12", "lines 12–14", and "(base)" for a comment on the old side. */
export function linesText(placed: Pick<PlacedComment, 'startLine' | 'endLine' | 'side'>): string {
  const lines =
    placed.startLine === placed.endLine
      ? `line ${placed.endLine}`
      : `lines ${placed.startLine}–${placed.endLine}`;
  return placed.side === 'old' ? `${lines} of the base` : lines;
}

/** The box a comment is written in: Ctrl/⌘+Enter saves it, Escape leaves it. */
export function CommentForm({
  label,
  initial = '',
  onSave,
  onCancel,
}: {
  label: string;
  initial?: string;
  onSave: (body: string) => void;
  onCancel: () => void;
}) {
  const [body, setBody] = useState(initial);
  const blank = body.trim() === '';
  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (!blank) onSave(body.trim());
  }
  return (
    <form className="review-form" onSubmit={submit}>
      <label className="review-label small muted">
        {label}
        <textarea
          rows={3}
          maxLength={REVIEW_LIMITS.bodyChars}
          value={body}
          placeholder="What should the agent change here?  (Ctrl+Enter to save)"
          onChange={(e) => setBody(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit();
            if (e.key === 'Escape') onCancel();
          }}
          autoFocus
        />
      </label>
      <div className="form-actions">
        <button type="button" className="button button-small" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button button-primary button-small" disabled={blank}>
          {initial ? 'Save' : 'Add to review'}
        </button>
      </div>
    </form>
  );
}

/** A draft or a sent comment, where the diff shows it (`id` lets n and p move to it). */
export function CommentCard({ placed, review, id }: { placed: PlacedComment; review: Review; id: string }) {
  const writing = review.writing;
  if (placed.kind === 'draft' && writing && 'draftId' in writing && writing.draftId === placed.draft.id) {
    return (
      <CommentForm
        label={`Your draft on ${linesText(placed)}`}
        initial={placed.draft.body}
        onSave={(body) => review.saveWriting(body)}
        onCancel={() => review.cancelWriting()}
      />
    );
  }
  if (placed.kind === 'draft') {
    const error = review.draftError(placed.draft.id);
    return (
      <article
        id={id}
        tabIndex={-1}
        className="review-comment review-draft"
        aria-label={`Draft comment on ${linesText(placed)}`}
      >
        <header className="review-comment-head small">
          <span className="review-tag">Draft</span>
          <span className="muted">{linesText(placed)}</span>
          {placed.outdated && <span className="review-tag review-tag-outdated">its lines changed since</span>}
          <span className="review-actions">
            <button
              type="button"
              className="button button-small"
              onClick={() => review.editDraft(placed.draft.id)}
            >
              Edit
            </button>
            <button
              type="button"
              className="button button-small"
              onClick={() => review.deleteDraft(placed.draft.id)}
            >
              Delete
            </button>
          </span>
        </header>
        <p className="review-body">{placed.draft.body}</p>
        {placed.outdated && <QuotedLines lines={placed.draft.lines} />}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
      </article>
    );
  }
  return (
    <article
      id={id}
      tabIndex={-1}
      className={`review-comment review-sent${placed.resolved ? ' review-resolved' : ''}`}
      aria-label={`${placed.resolved ? 'Resolved comment' : 'Comment'} on ${linesText(placed)}`}
    >
      <header className="review-comment-head small">
        {placed.resolved ? (
          <span className="review-tag review-tag-resolved" title="A later run changed these lines">
            Resolved
          </span>
        ) : (
          <span className="review-tag review-tag-open">Sent</span>
        )}
        <span className="muted">
          {linesText(placed)} · <RelativeTime iso={placed.sentAt} />
        </span>
      </header>
      <p className="review-body">{placed.comment.body}</p>
      {placed.resolved && <QuotedLines lines={placed.comment.lines} />}
    </article>
  );
}

/** What a comment named when it was written, for one whose lines are not in the diff as they were. */
function QuotedLines({ lines }: { lines: string[] }) {
  return (
    <div className="review-quoted" aria-label="The lines as they were">
      <div className="review-quoted-head">As it was:</div>
      {lines.map((line, i) => (
        <div
          key={i}
          className={line.startsWith('+') ? 'patch-add' : line.startsWith('-') ? 'patch-del' : undefined}
        >
          {line}
        </div>
      ))}
    </div>
  );
}

/** The drafts waiting, a message for the agent after them, and Send. */
export function ReviewBar({ review }: { review: Review }) {
  const count = review.drafts.length;
  if (count === 0) return null;
  const error = review.sendError instanceof ApiError ? review.sendError : null;
  return (
    <form
      className="review-bar"
      aria-label="Review"
      onSubmit={(e) => {
        e.preventDefault();
        review.sendReview();
      }}
    >
      <label htmlFor="review-message" className="small muted">
        {count} draft {count === 1 ? 'comment' : 'comments'}, kept in this browser until you send them. A
        message to go after them (optional):
      </label>
      <textarea
        id="review-message"
        rows={2}
        value={review.message}
        placeholder="e.g. Then run the tests."
        onChange={(e) => review.setMessage(e.target.value)}
      />
      {review.sendError && (
        <p className="field-error" role="alert">
          Not sent: {error?.fieldError('body.message') ?? review.sendError.message}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={review.sending}>
          {review.sending ? 'Sending…' : `Send review (${count})`}
        </button>
      </div>
    </form>
  );
}

/** How to comment, and the keys of the Changes view. */
export function ReviewKeys() {
  return (
    <p className="review-keys muted small">
      <span>Click a line number to comment; shift-click or drag for several lines.</span>
      <span>
        <kbd>]</kbd> <kbd>[</kbd> next, previous file
      </span>
      <span>
        <kbd>n</kbd> <kbd>p</kbd> next, previous comment
      </span>
    </p>
  );
}
