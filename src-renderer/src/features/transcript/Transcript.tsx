import { useMemo, useState } from 'react';
import { ErrorState, Loading } from '../../components/States';
import { fold } from '../../lib/format';
import { Markdown } from './Markdown';
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

const TASK_MARK = { pending: '○', in_progress: '◐', completed: '●' } as const;
const RESULT_LABEL = { success: 'Finished', error: 'Failed', stopped: 'Stopped' } as const;

function Folded({ text, label }: { text: string; label: string }) {
  const [all, setAll] = useState(false);
  const { short, folded } = fold(text);
  return (
    <>
      <pre className="code" aria-label={label}>
        {all || !folded ? text : short}
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

function ToolStep({ item }: { item: Extract<TranscriptItem, { kind: 'tool' }> }) {
  const summary = toolSummary(item.use);
  const failed = item.state === 'error';
  return (
    <details className={`tool tool-${item.state}`}>
      <summary>
        <span className="tool-name">{item.use.name}</span>
        {summary && <code className="tool-summary">{summary}</code>}
        <span className="tool-state">{TOOL_STATE_LABEL[item.state]}</span>
      </summary>
      <div className="tool-body">
        <div className="eyebrow">Input</div>
        <Folded text={JSON.stringify(item.use.input, null, 2)} label={`${item.use.name} input`} />
        {item.result && (
          <>
            <div className="eyebrow">{failed ? 'Error' : 'Output'}</div>
            <Folded text={toolResultText(item.result)} label={`${item.use.name} output`} />
          </>
        )}
      </div>
    </details>
  );
}

function resultFacts(item: { durationMs: number; turns: number }): string[] {
  return [
    ...(item.durationMs >= 50 ? [`${(item.durationMs / 1000).toFixed(1)} s`] : []),
    ...(item.turns > 0 ? [`${item.turns} ${item.turns === 1 ? 'turn' : 'turns'}`] : []),
  ];
}

function Item({ item }: { item: TranscriptItem }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="turn turn-user">
          <div className="eyebrow">Prompt</div>
          <p className="user-text">{item.text}</p>
        </div>
      );
    case 'text':
      return (
        <div className="turn turn-assistant">
          <Markdown text={item.text} />
        </div>
      );
    case 'thinking':
      return (
        <details className="thinking">
          <summary>Thinking</summary>
          <p>{item.text}</p>
        </details>
      );
    case 'tool':
      return <ToolStep item={item} />;
    case 'orphan-result':
      return (
        <details className="tool">
          <summary>
            <span className="tool-name">Tool output</span>
          </summary>
          <div className="tool-body">
            <Folded text={toolResultText(item.result)} label="Tool output" />
          </div>
        </details>
      );
    case 'todo': {
      const done = item.todos.filter((t) => t.status === 'completed').length;
      const current = item.todos.find((t) => t.status === 'in_progress');
      return (
        <details className="tool todo-update">
          <summary>
            <span className="tool-name">Tasks updated</span>
            <span className="tool-summary">
              {done} of {item.todos.length} done{current ? ` · now: ${current.title}` : ''}
            </span>
          </summary>
          <ul className="tasks tool-body" aria-label="Task update">
            {item.todos.map((todo, i) => (
              <li key={i} className={`task task-${todo.status}`}>
                <span aria-hidden="true" className="task-mark">
                  {TASK_MARK[todo.status]}
                </span>
                <span>{todo.title}</span>
              </li>
            ))}
          </ul>
        </details>
      );
    }
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
          <Markdown text={item.text} />
        </div>
      );
  }
}

/** Rows before they are measured: about a folded tool call or a short paragraph. */
const ESTIMATED_ROW_PX = 56;
/** Up to this many rows, all are in the page, so the browser's find in page sees the whole transcript. */
const RENDER_ALL_UP_TO = 150;

const renderItem = (item: TranscriptItem) => <Item item={item} />;

/** Rows are rebuilt as messages arrive; one whose parts are the same need not render again. */
function sameItem(a: TranscriptItem, b: TranscriptItem): boolean {
  if (a === b) return true;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const fields = Object.keys(left);
  return (
    fields.length === Object.keys(right).length &&
    fields.every((field) =>
      field === 'todos'
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
    const at = Number(item.key.split('.')[0]);
    if (at > messageIndex) break;
    found = item.key;
    if (at === messageIndex) break;
  }
  return found ?? items[0]?.key ?? null;
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
}: {
  pages: TranscriptPages;
  active: boolean;
  /** A message to bring into view and outline once it is read (a search hit's). */
  focusMessage?: number | undefined;
}) {
  const { messages, start } = pages;
  const items = useMemo(() => buildTranscript(messages, active, start ?? 0), [messages, active, start]);
  const [focus, setFocus] = useState<{ key: string; request: number } | null>(null);
  const [focusedMessage, setFocusedMessage] = useState<number | undefined>(undefined);
  if (focusMessage !== undefined && focusMessage !== focusedMessage && start !== null) {
    const key = rowOfMessage(items, focusMessage, start + messages.length);
    if (key !== null) {
      setFocusedMessage(focusMessage);
      setFocus({ key, request: (focus?.request ?? 0) + 1 });
    }
  }
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
