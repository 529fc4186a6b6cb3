import { useCallback, useMemo, useState, type ReactNode } from 'react';
import type { TranscriptReview } from '../../../../src-shared/review';
import { searchTerms, termPattern } from '../../../../src-shared/search-terms';
import { ErrorState, Loading } from '../../components/States';
import { ApprovalInTranscript } from '../approvals/ApprovalInTranscript';
import { fold } from '../../lib/format';
import { doneSummary, shownStatus, TASK_LABEL, TASK_MARK } from '../../lib/tasks';
import { Markdown } from './Markdown';
import { hasMarks, Marked, useUnfolded } from './marks';
import {
  buildTranscript,
  toolResultText,
  toolSummary,
  type ToolState,
  type TranscriptItem,
} from './transcript';
import type { TranscriptPages } from './use-transcript-pages';
import { TranscriptFind } from './TranscriptFind';
import { VirtualList } from './VirtualList';

const RESULT_LABEL = { success: 'Finished', error: 'Failed', stopped: 'Stopped' } as const;

function Folded({ text, label, marks }: { text: string; label: string; marks: RegExp | null }) {
  const [all, setAll] = useUnfolded(hasMarks(text, marks));
  const { short, folded } = fold(text);
  return (
    <>
      <pre className="code" aria-label={label}>
        <Marked text={all || !folded ? text : short} marks={marks} />
      </pre>
      {folded && (
        <button type="button" className="link-button" onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all (${text.split('\n').length} lines)`}
        </button>
      )}
    </>
  );
}

const TOOL_STATE_LABEL: Record<ToolState, string> = {
  running: 'running…',
  done: 'done',
  error: 'error',
  ended: 'ended without a result',
};

/**
 * A fold of the transcript (a tool call, thinking): closed, unless it holds a search's match
 * (then open until the person closes it).
 */
function Fold({
  className,
  marks,
  children,
}: {
  className: string;
  marks: RegExp | null;
  children: ReactNode;
}) {
  const [open, setOpen] = useUnfolded(marks !== null);
  return (
    <details
      className={className}
      open={open}
      onToggle={(e) => {
        if (e.currentTarget.open !== open) setOpen(e.currentTarget.open);
      }}
    >
      {children}
    </details>
  );
}

function ToolStep({
  item,
  marks,
}: {
  item: Extract<TranscriptItem, { kind: 'tool' }>;
  marks: RegExp | null;
}) {
  const summary = toolSummary(item.use);
  const failed = item.state === 'error';
  return (
    <Fold className={`tool tool-${item.state}`} marks={marks}>
      <summary>
        <span className="tool-name">
          <Marked text={item.use.name} marks={marks} />
        </span>
        {summary && (
          <code className="tool-summary">
            <Marked text={summary} marks={marks} />
          </code>
        )}
        <span className="tool-state">{TOOL_STATE_LABEL[item.state]}</span>
      </summary>
      <div className="tool-body">
        <div className="eyebrow">Input</div>
        <Folded
          text={JSON.stringify(item.use.input, null, 2)}
          label={`${item.use.name} input`}
          marks={marks}
        />
        {item.children && (
          <>
            <div className="eyebrow">Sub-agent</div>
            <ol className="sub-agent" aria-label="Sub-agent">
              {item.children.map((child) => (
                <li key={child.key}>
                  <Item item={child} marks={marks} />
                </li>
              ))}
            </ol>
          </>
        )}
        {item.result && (
          <>
            <div className="eyebrow">{failed ? 'Error' : 'Output'}</div>
            <Folded text={toolResultText(item.result)} label={`${item.use.name} output`} marks={marks} />
          </>
        )}
      </div>
    </Fold>
  );
}

function resultFacts(item: { durationMs: number; turns: number }): string[] {
  return [
    ...(item.durationMs >= 50 ? [`${(item.durationMs / 1000).toFixed(1)} s`] : []),
    ...(item.turns > 0 ? [`${item.turns} ${item.turns === 1 ? 'turn' : 'turns'}`] : []),
  ];
}

/** A review the person sent: each comment beside the lines it quoted, then the message. */
function ReviewTurn({ review, marks }: { review: TranscriptReview; marks: RegExp | null }) {
  const count = review.comments.length;
  return (
    <div className="turn turn-user">
      <div className="eyebrow">
        Review · {count} {count === 1 ? 'comment' : 'comments'}
      </div>
      <ol className="review-turn">
        {review.comments.map((comment, i) => (
          <li key={i}>
            <code className="small">
              {comment.path}:
              {comment.startLine === undefined ? comment.line : `${comment.startLine}–${comment.line}`}
              {comment.side === 'old' ? ' (base)' : ''}
            </code>
            <pre className="review-turn-lines">{comment.lines.join('\n')}</pre>
            <p className="user-text">
              <Marked text={comment.body} marks={marks} />
            </p>
          </li>
        ))}
      </ol>
      {review.message !== undefined && (
        <p className="user-text">
          <Marked text={review.message} marks={marks} />
        </p>
      )}
    </div>
  );
}

/** An item of the transcript; `marks` marks a search's terms in it, and opens its folds. */
function Item({ item, marks }: { item: TranscriptItem; marks: RegExp | null }) {
  switch (item.kind) {
    case 'user':
      if (item.review) return <ReviewTurn review={item.review} marks={marks} />;
      return (
        <div className="turn turn-user">
          <div className="eyebrow">Prompt</div>
          <p className="user-text">
            <Marked text={item.text} marks={marks} />
          </p>
        </div>
      );
    case 'text':
      return (
        <div className="turn turn-assistant">
          <Markdown text={item.text} marks={marks} />
        </div>
      );
    case 'thinking':
      return (
        <Fold className="thinking" marks={marks}>
          <summary>Thinking</summary>
          <p>
            <Marked text={item.text} marks={marks} />
          </p>
        </Fold>
      );
    case 'tool':
      return <ToolStep item={item} marks={marks} />;
    case 'orphan-result':
      return (
        <Fold className="tool" marks={marks}>
          <summary>
            <span className="tool-name">Tool output</span>
          </summary>
          <div className="tool-body">
            <Folded text={toolResultText(item.result)} label="Tool output" marks={marks} />
          </div>
        </Fold>
      );
    case 'todo': {
      // What the agent is at now: only while its run goes on, in its latest list.
      const current =
        item.runOver || item.superseded ? undefined : item.todos.find((t) => t.status === 'in_progress');
      return (
        <Fold className="tool todo-update" marks={marks}>
          <summary>
            <span className="tool-name">Tasks updated</span>
            <span className="tool-summary">
              {doneSummary(
                item.todos.map((t) => t.status),
                item.runOver,
              )}
              {current ? ` · now: ${current.title}` : ''}
            </span>
          </summary>
          <ul className="tasks tool-body" aria-label="Task update">
            {item.todos.map((todo, i) => {
              const status = shownStatus(todo.status, item.runOver);
              return (
                <li key={i} className={`task task-${status}`}>
                  <span aria-hidden="true" className="task-mark">
                    {TASK_MARK[status]}
                  </span>
                  <span>
                    <Marked text={todo.title} marks={marks} />
                  </span>
                  <span className="visually-hidden"> ({TASK_LABEL[status]})</span>
                </li>
              );
            })}
          </ul>
        </Fold>
      );
    }
    case 'approval':
      return <ApprovalInTranscript request={item.request} text={item.text} decided={item.decided} />;
    case 'approval-decided':
      return (
        <p className="approval-decision-note muted small">
          <Marked text={item.text} marks={marks} />
        </p>
      );
    case 'result':
      return (
        <div className={`result result-${item.outcome}`} role="status">
          <strong>{RESULT_LABEL[item.outcome]}</strong>
          {/* A result written without a run (a stop, an import) has no duration or turns to tell. */}
          {resultFacts(item).map((fact) => (
            <span key={fact} className="muted small">
              {' '}
              · {fact}
            </span>
          ))}
          <Markdown text={item.text} marks={marks} />
        </div>
      );
  }
}

/** Rows before they are measured: about a folded tool call or a short paragraph. */
const ESTIMATED_ROW_PX = 56;
/** Up to this many rows, all are in the page, so the browser's find in page sees the whole transcript. */
const RENDER_ALL_UP_TO = 150;

/** Rows are rebuilt as messages arrive; one whose parts are the same need not render again. */
function sameItem(a: TranscriptItem, b: TranscriptItem): boolean {
  if (a === b) return true;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const fields = Object.keys(left);
  return (
    fields.length === Object.keys(right).length &&
    fields.every((field) =>
      field === 'todos' || field === 'children'
        ? JSON.stringify(left[field]) === JSON.stringify(right[field])
        : left[field] === right[field],
    )
  );
}

/**
 * The row showing a message: its first row, or (for a tool's output, shown with the call that
 * asked for it) the last row before it. Null until that part of the transcript is read.
 */
function rowOfMessage(items: TranscriptItem[], messageIndex: number, readUpTo: number): string | null {
  if (readUpTo <= messageIndex) return null;
  let found: string | null = null;
  for (const item of items) {
    // A sub-agent's message is shown inside the call that started it.
    if (holdsMessage(item, messageIndex)) return item.key;
    const at = Number(item.key.split('.')[0]);
    if (at > messageIndex) break;
    found = item.key;
    if (at === messageIndex) break;
  }
  return found ?? items[0]?.key ?? null;
}

function holdsMessage(item: TranscriptItem, messageIndex: number): boolean {
  return (
    item.kind === 'tool' &&
    (item.children ?? []).some(
      (child) => Number(child.key.split('.')[0]) === messageIndex || holdsMessage(child, messageIndex),
    )
  );
}

/** The line above the first message read: how many come before it, read as the view nears them. */
function EarlierMessages({ pages }: { pages: TranscriptPages }) {
  const earlier = pages.start ?? 0;
  if (earlier === 0) return null;
  return (
    <p className="transcript-earlier muted small">
      <span>
        {earlier.toLocaleString()} earlier {earlier === 1 ? 'message' : 'messages'}
      </span>
      {pages.readingEarlier ? (
        <span role="status">
          <span className="spinner" aria-hidden="true" /> loading…
        </span>
      ) : (
        <button type="button" className="link-button" onClick={pages.readEarlier}>
          Load more
        </button>
      )}
    </p>
  );
}

/**
 * The conversation, read in pages from its end (see useTranscriptPages) and shown in a
 * scrolled list that keeps only the rows near the view in the page.
 */
export function Transcript({
  pages,
  active,
  focusMessage,
  focusTerms,
}: {
  pages: TranscriptPages;
  active: boolean;
  /** A message to bring into view and outline once it is read (a search hit's). */
  focusMessage?: number | undefined;
  /** The search that found `focusMessage`: its terms are marked there, its folds open. */
  focusTerms?: string | undefined;
}) {
  const { messages, start } = pages;
  const items = useMemo(() => buildTranscript(messages, active, start ?? 0), [messages, active, start]);
  const [focus, setFocus] = useState<{ key: string; request: number; terms?: string } | null>(null);
  const [focusedMessage, setFocusedMessage] = useState<number | undefined>(undefined);
  if (focusMessage !== undefined && focusMessage !== focusedMessage && start !== null) {
    const key = rowOfMessage(items, focusMessage, start + messages.length);
    if (key !== null) {
      setFocusedMessage(focusMessage);
      setFocus({ key, request: (focus?.request ?? 0) + 1, ...(focusTerms ? { terms: focusTerms } : {}) });
    }
  }
  const focusedTerms = focus?.terms;
  const marks = useMemo(() => {
    const terms = focusedTerms ? searchTerms(focusedTerms) : [];
    return terms.length > 0 ? termPattern(terms) : null;
  }, [focusedTerms]);
  const renderItem = useCallback(
    (item: TranscriptItem, focused: boolean) => <Item item={item} marks={focused ? marks : null} />,
    [marks],
  );
  if (start === null) {
    return pages.error ? (
      <ErrorState error={pages.error} onRetry={pages.retry} />
    ) : (
      <Loading label="Loading the transcript" />
    );
  }
  if (items.length === 0 && start === 0) return <p className="muted">No messages yet.</p>;
  return (
    <>
      <TranscriptFind
        items={items}
        earlier={start}
        onFound={(key) => setFocus((now) => (key ? { key, request: (now?.request ?? 0) + 1 } : null))}
      />
      <VirtualList
        items={items}
        renderItem={renderItem}
        sameItem={sameItem}
        estimateHeight={ESTIMATED_ROW_PX}
        renderAllUpTo={RENDER_ALL_UP_TO}
        onNearStart={pages.readEarlier}
        before={<EarlierMessages pages={pages} />}
        label="Transcript"
        focus={focus}
      />
      {pages.error && (
        <p className="field-error" role="alert">
          Could not load more of the transcript: {pages.error.message}{' '}
          <button type="button" className="link-button" onClick={pages.retry}>
            Try again
          </button>
        </p>
      )}
    </>
  );
}
