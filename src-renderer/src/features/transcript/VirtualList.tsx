import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import { flushSync } from 'react-dom';
import './virtual-list.css';

/** Where the view is held while rows above it change size or arrive. */
type Hold =
  | { kind: 'end' }
  /** The row `key` stays `delta` px below the top of the view. */
  | { kind: 'row'; key: string; delta: number };

const END: Hold = { kind: 'end' };

function sameHold(a: Hold, b: Hold): boolean {
  if (a.kind === 'end' || b.kind === 'end') return a.kind === b.kind;
  return a.key === b.key && Math.abs(a.delta - b.delta) < 0.5;
}

interface VirtualListProps<T extends { key: string }> {
  items: readonly T[];
  /** A row's content; `focused` is true for the row `focus` names. */
  renderItem: (item: T, focused: boolean) => ReactNode;
  /** Whether a row shows the same thing as before, so it need not render again. */
  sameItem: (a: T, b: T) => boolean;
  /** A row's height before it has been measured. */
  estimateHeight: number;
  /** Lists this short render every row (so the browser's find in page sees them all). */
  renderAllUpTo: number;
  /** Called while the view is within a screen of the first row. */
  onNearStart?: () => void;
  /** Shown above the rows, inside the scrolled area. */
  before?: ReactNode;
  label: string;
  /** A row to bring into view and mark; a new request brings it again. */
  focus?: { key: string; request: number } | null;
}

interface RowProps<T extends { key: string }> {
  item: T;
  renderItem: (item: T, focused: boolean) => ReactNode;
  sameItem: (a: T, b: T) => boolean;
  observe: (element: HTMLLIElement | null) => (() => void) | undefined;
  focused: boolean;
}

/** One row, rendered again only when its item shows something else. */
const Row = memo(
  function Row<T extends { key: string }>({ item, renderItem, observe, focused }: RowProps<T>) {
    return (
      <li data-row-key={item.key} ref={observe} className={focused ? 'row-focused' : undefined}>
        {renderItem(item, focused)}
      </li>
    );
  },
  (a, b) =>
    a.renderItem === b.renderItem &&
    a.observe === b.observe &&
    a.focused === b.focused &&
    a.sameItem(a.item, b.item),
) as <T extends { key: string }>(props: RowProps<T>) => ReactNode;

/**
 * A scrolled list that keeps only the rows near the view in the page, for lists of any
 * length. Rows have their own heights: each is measured once shown (and again whenever it
 * changes size, such as a fold opening), and rows never shown count as `estimateHeight`.
 * The view opens at the end and follows rows added there while it is at the end; otherwise
 * it holds its first visible row in place as rows above it are added or change size, so
 * reading is never disturbed by what loads.
 */
export function VirtualList<T extends { key: string }>({
  items,
  renderItem,
  sameItem,
  estimateHeight,
  renderAllUpTo,
  onNearStart,
  before,
  label,
  focus = null,
}: VirtualListProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const [heights, setHeights] = useState<ReadonlyMap<string, number>>(() => new Map());
  // A list that opens with a row to focus (a search hit's) opens there, not at the end.
  const [hold, setHold] = useState<Hold>(() => (focus ? { kind: 'row', key: focus.key, delta: 48 } : END));
  const [view, setView] = useState({ top: 0, height: 800 });
  // A new focus request holds its row a little below the top of the view.
  const [focusSeen, setFocusSeen] = useState(focus);
  if (focus !== focusSeen) {
    setFocusSeen(focus);
    if (focus) setHold({ kind: 'row', key: focus.key, delta: 48 });
  }

  const offsets = useMemo(() => {
    const at = new Float64Array(items.length + 1);
    items.forEach((item, i) => {
      at[i + 1] = (at[i] ?? 0) + (heights.get(item.key) ?? estimateHeight);
    });
    return at;
  }, [items, heights, estimateHeight]);
  const total = offsets[items.length] ?? 0;

  // The top of the view in the list's own coordinates, where the hold puts it.
  const heldIndex = hold.kind === 'row' ? items.findIndex((item) => item.key === hold.key) : -1;
  const wantedTop =
    hold.kind === 'end'
      ? total - view.height
      : heldIndex >= 0
        ? (offsets[heldIndex] ?? 0) - hold.delta
        : view.top;
  const top = Math.max(0, Math.min(wantedTop, total - view.height));
  const margin = Math.max(600, view.height);
  let first = 0;
  let last = items.length;
  if (items.length > renderAllUpTo) {
    first = Math.max(0, upperBound(offsets, top - margin) - 1);
    last = Math.min(items.length, upperBound(offsets, top + view.height + margin));
  }

  // What the handlers need of the latest render.
  const latest = useRef({ items, offsets, hold });
  useLayoutEffect(() => {
    latest.current = { items, offsets, hold };
  });

  /** Holds the first row in view, or the end when the view is there. */
  const holdFromScroll = useCallback(() => {
    const element = scroller.current;
    const ol = list.current;
    if (!element || !ol) return;
    const scrollTop = element.scrollTop;
    const atEnd = element.scrollHeight - scrollTop - element.clientHeight <= 2;
    const next = atEnd ? END : firstVisible(element, ol, latest.current.items, latest.current.offsets);
    setHold((now) => (sameHold(now, next) ? now : next));
    setView({ top: scrollTop - ol.offsetTop, height: element.clientHeight });
  }, []);

  // After every render, the view goes where the hold says.
  useLayoutEffect(() => {
    const element = scroller.current;
    const ol = list.current;
    if (!element || !ol) return;
    let target = element.scrollTop;
    if (hold.kind === 'end') target = element.scrollHeight - element.clientHeight;
    else {
      const row = ol.querySelector<HTMLElement>(`[data-row-key="${CSS.escape(hold.key)}"]`);
      if (row) target = row.offsetTop - hold.delta;
    }
    if (Math.abs(element.scrollTop - target) > 1) element.scrollTop = target;
  });

  // Each row is measured once it is laid out, and again whenever it changes size (a fold
  // opened, "Show all"), before the next paint, so nothing jumps.
  const [resizes] = useState(
    () =>
      new ResizeObserver((entries) => {
        const sizes: Array<[string, number]> = [];
        for (const entry of entries) {
          const key = (entry.target as HTMLElement).dataset.rowKey;
          const height = entry.borderBoxSize[0]?.blockSize;
          if (key !== undefined && height !== undefined) sizes.push([key, height]);
        }
        flushSync(() =>
          setHeights((known) => {
            const changed = sizes.filter(([key, height]) => Math.abs((known.get(key) ?? -1) - height) > 0.5);
            return changed.length === 0 ? known : new Map([...known, ...changed]);
          }),
        );
      }),
  );
  useEffect(() => () => resizes.disconnect(), [resizes]);
  const observe = useCallback(
    (element: HTMLLIElement | null) => {
      if (!element) return undefined;
      resizes.observe(element);
      return () => resizes.unobserve(element);
    },
    [resizes],
  );

  // The view's own height.
  useEffect(() => {
    const element = scroller.current;
    if (!element) return undefined;
    const sizes = new ResizeObserver(() => setView((v) => ({ ...v, height: element.clientHeight })));
    sizes.observe(element);
    return () => sizes.disconnect();
  }, []);

  const nearStart = top < view.height;
  useEffect(() => {
    if (nearStart) onNearStart?.();
  }, [nearStart, onNearStart, items.length]);

  return (
    <div className="virtual-list">
      <div
        ref={scroller}
        className="virtual-scroller"
        tabIndex={0}
        onScroll={holdFromScroll}
        // A click can open a fold: the row clicked stays put rather than the end.
        onClickCapture={() => {
          const element = scroller.current;
          if (hold.kind === 'end' && element && list.current && element.scrollHeight > element.clientHeight)
            setHold(firstVisible(element, list.current, items, offsets));
        }}
      >
        {before}
        <ol
          ref={list}
          className="transcript"
          aria-label={label}
          style={{ paddingTop: offsets[first] ?? 0, paddingBottom: total - (offsets[last] ?? total) }}
        >
          {items.slice(first, last).map((item) => (
            <Row
              key={item.key}
              item={item}
              renderItem={renderItem}
              sameItem={sameItem}
              observe={observe}
              focused={focus?.key === item.key}
            />
          ))}
        </ol>
      </div>
      {hold.kind === 'row' && (
        <button type="button" className="button button-small jump-to-end" onClick={() => setHold(END)}>
          Latest ↓
        </button>
      )}
    </div>
  );
}

/**
 * The first row in the view, held where it is: a row in the page if one is in view (after a
 * long jump none may be yet), else the row the measured and estimated heights put there.
 */
function firstVisible<T extends { key: string }>(
  element: HTMLDivElement,
  ol: HTMLOListElement,
  items: readonly T[],
  offsets: Float64Array,
): Hold {
  const scrollTop = element.scrollTop;
  const bottom = scrollTop + element.clientHeight;
  for (const child of ol.children) {
    const row = child as HTMLElement;
    if (row.offsetTop + row.offsetHeight > scrollTop && row.offsetTop < bottom && row.dataset.rowKey) {
      return { kind: 'row', key: row.dataset.rowKey, delta: row.offsetTop - scrollTop };
    }
  }
  const index = Math.max(0, Math.min(items.length - 1, upperBound(offsets, scrollTop - ol.offsetTop) - 1));
  const item = items[index];
  if (!item) return END;
  return { kind: 'row', key: item.key, delta: ol.offsetTop + (offsets[index] ?? 0) - scrollTop };
}

/** The first index whose offset is greater than `value` (offsets ascend). */
function upperBound(offsets: Float64Array, value: number): number {
  let low = 0;
  let high = offsets.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((offsets[mid] ?? 0) > value) high = mid;
    else low = mid + 1;
  }
  return low;
}
