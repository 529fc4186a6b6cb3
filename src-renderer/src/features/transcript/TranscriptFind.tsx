import { useMemo, useState } from 'react';
import { itemText, type TranscriptItem } from './transcript';

function findStatus(count: number, shown: number | null): string {
  if (count === 0) return 'No match';
  if (shown === null) return count === 1 ? '1 match' : `${count} matches`;
  return `${shown + 1} of ${count}`;
}

/**
 * Finds words in the messages read so far: the browser's find in page sees only the rows
 * near the view of a long transcript. Enter (or Next) goes to the next match, Shift+Enter
 * (or Previous) to the one before; the first goes to the latest, where the view opens.
 */
export function TranscriptFind({
  items,
  earlier,
  onFound,
}: {
  items: TranscriptItem[];
  /** Messages before those read, which the find cannot see yet. */
  earlier: number;
  onFound: (key: string | null) => void;
}) {
  const [text, setText] = useState('');
  const [current, setCurrent] = useState<number | null>(null);
  const query = text.trim().toLowerCase();
  const searching = query !== '';
  const texts = useMemo(
    () => (searching ? items.map((item) => itemText(item).toLowerCase()) : []),
    [items, searching],
  );
  const matches = useMemo(
    () => (searching ? items.filter((_, i) => texts[i]?.includes(query)) : []),
    [items, texts, query, searching],
  );
  const shown = current !== null && current < matches.length ? current : null;

  function go(step: 1 | -1) {
    if (matches.length === 0) return;
    const next = shown === null ? matches.length - 1 : (shown + step + matches.length) % matches.length;
    setCurrent(next);
    onFound(matches[next]?.key ?? null);
  }

  return (
    <div className="transcript-find" role="search">
      <label htmlFor="transcript-find" className="visually-hidden">
        Find in transcript
      </label>
      <input
        id="transcript-find"
        type="search"
        placeholder="Find in transcript"
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setCurrent(null);
          onFound(null);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            go(e.shiftKey ? -1 : 1);
          }
        }}
      />
      {searching && (
        <span className="muted small" role="status">
          {findStatus(matches.length, shown)}
          {earlier > 0 ? ` in the messages read (${earlier.toLocaleString()} earlier not read yet)` : ''}
        </span>
      )}
      <button
        type="button"
        className="button button-small"
        disabled={matches.length === 0}
        onClick={() => go(-1)}
      >
        Previous
      </button>
      <button
        type="button"
        className="button button-small"
        disabled={matches.length === 0}
        onClick={() => go(1)}
      >
        Next
      </button>
    </div>
  );
}
