import { Fragment, useState, type ReactNode } from 'react';
import type { Element, ElementContent, Root } from 'hast';

/** `text` in pieces, the parts `pattern` matches (the terms a search found) marked. */
export function Marked({ text, marks }: { text: string; marks: RegExp | null }): ReactNode {
  if (!marks) return text;
  return splitMarked(text, marks).map((piece, i) =>
    piece.marked ? <mark key={i}>{piece.text}</mark> : <Fragment key={i}>{piece.text}</Fragment>,
  );
}

function splitMarked(text: string, marks: RegExp): Array<{ text: string; marked: boolean }> {
  const pieces: Array<{ text: string; marked: boolean }> = [];
  let at = 0;
  for (const match of text.matchAll(new RegExp(marks.source, marks.flags))) {
    if (match[0] === '') continue;
    if (match.index > at) pieces.push({ text: text.slice(at, match.index), marked: false });
    pieces.push({ text: match[0], marked: true });
    at = match.index + match[0].length;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), marked: false });
  return pieces;
}

/** A rehype plugin marking the terms in rendered Markdown's text, code included. */
export function rehypeMarks(marks: RegExp) {
  function visit(node: Root | Element): void {
    node.children = node.children.flatMap((child): ElementContent[] => {
      if (child.type === 'element') {
        visit(child);
        return [child];
      }
      if (child.type !== 'text') return [child as ElementContent];
      return splitMarked(child.value, marks).map((piece) =>
        piece.marked
          ? {
              type: 'element',
              tagName: 'mark',
              properties: {},
              children: [{ type: 'text', value: piece.text }],
            }
          : { type: 'text', value: piece.text },
      );
    }) as typeof node.children;
  }
  return () => (tree: Root) => visit(tree);
}

/**
 * Whether a fold is open: as the person last set it, else open while it holds a search's
 * match, so a hit is shown unfolded.
 */
export function useUnfolded(marked: boolean): [boolean, (open: boolean) => void] {
  const [chosen, setChosen] = useState<boolean | null>(null);
  return [chosen ?? marked, setChosen];
}

/** Whether `text` holds a match of `marks`. */
export function hasMarks(text: string, marks: RegExp | null): boolean {
  return marks !== null && new RegExp(marks.source, marks.flags.replace('g', '')).test(text);
}
