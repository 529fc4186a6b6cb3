import { useEffect, useMemo, useRef, useState } from 'react';
import type { ChangedFile } from '../../../../src-shared/changes';
import { patchLines } from '../../../../src-shared/patch-lines';
import {
  commentedLines,
  placeComment,
  REVIEW_LIMITS,
  type ReviewedComment,
  type ReviewSide,
  type SentReview,
} from '../../../../src-shared/review';
import { ApiError } from '../../api/client';
import { useSendReview, useSessionReviews } from '../../api/queries';
import { useReviewDrafts, type DraftComment } from './review-drafts';

/** A line number picked in a diff: which file, which side, which hunk. */
export interface LinePick {
  path: string;
  side: ReviewSide;
  number: number;
  hunk: number;
}

/** Lines of one hunk on one side, from `startLine` to `line`. */
export interface LineRange {
  path: string;
  side: ReviewSide;
  hunk: number;
  startLine: number;
  line: number;
}

/** A comment where the Changes view shows it: at `line` on `side` of its file, or below it (null). */
export type PlacedComment = {
  key: string;
  path: string;
  side: ReviewSide;
  line: number | null;
  /** The lines it stands for now (open), or stood for when it was written (resolved, outdated). */
  startLine: number;
  endLine: number;
} & (
  | { kind: 'draft'; draft: DraftComment; outdated: boolean }
  | { kind: 'sent'; comment: ReviewedComment; sentAt: string; resolved: boolean }
);

/** Drafts, then sent comments, each where it stands in `files` now; in the order n and p go. */
function placeAll(
  files: readonly ChangedFile[],
  drafts: DraftComment[],
  reviews: SentReview[],
): PlacedComment[] {
  const placed: PlacedComment[] = [];
  for (const draft of drafts) {
    const at = placeComment(files, draft);
    const base = { key: `draft-${draft.id}`, path: draft.path, side: draft.side };
    placed.push(
      at.resolved
        ? {
            ...base,
            kind: 'draft',
            draft,
            outdated: true,
            line: at.line,
            startLine: draft.startLine ?? draft.line,
            endLine: draft.line,
          }
        : {
            ...base,
            kind: 'draft',
            draft,
            outdated: false,
            line: at.line,
            startLine: at.startLine,
            endLine: at.line,
          },
    );
  }
  for (const review of reviews) {
    review.comments.forEach((comment, i) => {
      const at = placeComment(files, comment);
      placed.push({
        key: `sent-${review.index}-${i}`,
        path: comment.path,
        side: comment.side,
        kind: 'sent',
        comment,
        sentAt: review.sentAt,
        resolved: at.resolved,
        line: at.line,
        startLine: at.resolved ? (comment.startLine ?? comment.line) : at.startLine,
        endLine: at.resolved ? comment.line : at.line,
      });
    });
  }
  // In the order the view shows them: by file, then by the row of the diff they follow.
  const fileOrder = new Map(files.map((f, i) => [f.path, i]));
  const rows = new Map<string, Map<string, number>>();
  const rowOf = (p: PlacedComment) => {
    const file = files.find((f) => f.path === p.path);
    if (!file?.patch || p.line === null) return Infinity;
    let byLine = rows.get(p.path);
    if (!byLine) {
      byLine = new Map();
      patchLines(file.patch).forEach((l, row) => {
        if (l.oldLine !== undefined) byLine!.set(`old:${l.oldLine}`, row);
        if (l.newLine !== undefined) byLine!.set(`new:${l.newLine}`, row);
      });
      rows.set(p.path, byLine);
    }
    return byLine.get(`${p.side}:${p.line}`) ?? Infinity;
  };
  const order = (p: PlacedComment) => [fileOrder.get(p.path) ?? Infinity, rowOf(p)] as const;
  // Stable: at one row, sent comments (older) come before drafts.
  return placed
    .map((p, i) => ({ p, i, o: order(p) }))
    .sort((a, b) => a.o[0] - b.o[0] || a.o[1] - b.o[1] || a.i - b.i)
    .map(({ p }) => p);
}

/** What a draft's comment sends: where its lines are now, else where they were. */
function sentForm(placed: Extract<PlacedComment, { kind: 'draft' }>) {
  const { draft } = placed;
  return {
    path: draft.path,
    side: draft.side,
    line: placed.endLine,
    ...(placed.startLine !== placed.endLine ? { startLine: placed.startLine } : {}),
    body: draft.body,
  };
}

/**
 * A session's review in the Changes view: its drafts (kept in this browser), the comments it
 * sent (from the server), each placed in the diff as it is now; the lines being picked, the
 * comment being written, and sending.
 */
export function useReview(options: {
  sessionId: string;
  organizationId: string;
  updatedAt: string;
  files: readonly ChangedFile[] | null;
  /** Whether the files are shown: the comments sent are read only then. */
  shown: boolean;
}) {
  const { sessionId, organizationId, updatedAt, files, shown } = options;
  const drafts = useReviewDrafts(sessionId);
  const reviews = useSessionReviews(sessionId, organizationId, updatedAt, files !== null && shown);
  const send = useSendReview(organizationId, sessionId);
  /** Lines being picked with the pointer (a drag, or a shift-click). */
  const [picking, setPicking] = useState<LineRange | null>(null);
  /** Where the pointer's range starts while it is pressed. */
  const dragFrom = useRef<LinePick | null>(null);
  /** The last line picked: a shift-click reaches from there. */
  const [anchor, setAnchor] = useState<LinePick | null>(null);
  /** The lines a new comment is being written for, or the draft being edited. */
  const [writing, setWriting] = useState<LineRange | { draftId: string } | null>(null);
  const [message, setMessage] = useState('');
  /** The drafts sent last, by position in the request, to name the one the server refused. */
  const [sentIds, setSentIds] = useState<string[]>([]);

  const placed = useMemo(
    () => placeAll(files ?? [], drafts.drafts, reviews.data?.reviews ?? []),
    [files, drafts.drafts, reviews.data],
  );
  const draftsPlaced = placed.filter(
    (p): p is Extract<PlacedComment, { kind: 'draft' }> => p.kind === 'draft',
  );

  const range = (from: LinePick, to: LinePick): LineRange => ({
    path: from.path,
    side: from.side,
    hunk: from.hunk,
    startLine: Math.min(from.number, to.number),
    line: Math.max(from.number, to.number),
  });
  /** Whether `to` can end a range that starts at `from`: same file, side and hunk, not too long. */
  const reaches = (from: LinePick | null, to: LinePick): from is LinePick =>
    from !== null &&
    from.path === to.path &&
    from.side === to.side &&
    from.hunk === to.hunk &&
    Math.abs(from.number - to.number) < REVIEW_LIMITS.rangeLines;

  useEffect(() => {
    if (!picking) return;
    const done = () => {
      if (!dragFrom.current) return;
      dragFrom.current = null;
      setWriting(picking);
      setPicking(null);
    };
    window.addEventListener('pointerup', done);
    return () => window.removeEventListener('pointerup', done);
  }, [picking]);

  return {
    drafts: drafts.drafts,
    placed,
    reviewsError: reviews.error,
    picking,
    writing,
    message,
    setMessage,
    sending: send.isPending,
    sendError: send.error,

    /** A pointer pressed on a line number: a shift-press reaches from the last line picked. */
    pointerDown(pick: LinePick, shift: boolean) {
      const from = shift && reaches(anchor, pick) ? anchor : pick;
      dragFrom.current = from;
      setAnchor(from);
      setPicking(range(from, pick));
    },
    /** Dragged over another line number: the range grows, within its hunk. */
    pointerEnter(pick: LinePick) {
      const from = dragFrom.current;
      if (reaches(from, pick)) setPicking(range(from, pick));
    },
    /** A line number chosen from the keyboard (Enter): one line, or from the last one with Shift. */
    keyboardPick(pick: LinePick, shift: boolean) {
      const from = shift && reaches(anchor, pick) ? anchor : pick;
      setAnchor(from);
      setWriting(range(from, pick));
    },
    editDraft(draftId: string) {
      setWriting({ draftId });
    },
    cancelWriting() {
      setWriting(null);
    },
    /** Saves what is being written: a new draft for the lines picked, or the draft's new words. */
    saveWriting(body: string) {
      if (!writing) return;
      if ('draftId' in writing) drafts.edit(writing.draftId, body);
      else {
        const found = commentedLines(files ?? [], writing);
        if ('problem' in found) return;
        const { path, side, startLine, line } = writing;
        drafts.add({
          path,
          side,
          line,
          ...(startLine !== line ? { startLine } : {}),
          body,
          lines: found.lines,
        });
      }
      setWriting(null);
    },
    deleteDraft(id: string) {
      drafts.remove(id);
      if (writing && 'draftId' in writing && writing.draftId === id) setWriting(null);
    },
    /** The server's refusal of a draft, when the last review sent named it. */
    draftError(id: string): string | undefined {
      const error = send.error instanceof ApiError ? send.error : null;
      const at = sentIds.indexOf(id);
      return at < 0 ? undefined : error?.fieldError(`body.comments.${at}`);
    },
    /** Sends every draft, and the message, as one review; the drafts sent are then dropped. */
    sendReview() {
      if (draftsPlaced.length === 0) return;
      const ids = draftsPlaced.map((p) => p.draft.id);
      setSentIds(ids);
      const trimmed = message.trim();
      send.mutate(
        { comments: draftsPlaced.map(sentForm), ...(trimmed ? { message: trimmed } : {}) },
        {
          onSuccess: () => {
            drafts.sent(ids);
            setMessage('');
          },
        },
      );
    },
  };
}
export type Review = ReturnType<typeof useReview>;
