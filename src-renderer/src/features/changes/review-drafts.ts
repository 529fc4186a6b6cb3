import { useState } from 'react';
import { z } from 'zod';
import { ReviewedCommentSchema, type ReviewedComment } from '../../../../src-shared/review';

/** A comment not sent yet: where it is, the lines it named when it was written, the words. */
export const DraftCommentSchema = ReviewedCommentSchema.extend({ id: z.string() });
export type DraftComment = z.infer<typeof DraftCommentSchema>;

const storageKey = (sessionId: string) => `sessiondesk.review-drafts.${sessionId}`;

/** The drafts kept for a session in this browser; anything unreadable counts as none. */
function readDrafts(sessionId: string): DraftComment[] {
  try {
    const parsed = z
      .array(DraftCommentSchema)
      .safeParse(JSON.parse(localStorage.getItem(storageKey(sessionId)) ?? '[]'));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

function writeDrafts(sessionId: string, drafts: DraftComment[]): void {
  if (drafts.length === 0) localStorage.removeItem(storageKey(sessionId));
  else localStorage.setItem(storageKey(sessionId), JSON.stringify(drafts));
}

let counter = 0;
const newId = () => `${Date.now().toString(36)}-${(counter += 1)}`;

/**
 * A session's draft review comments, kept in this browser (localStorage) until the review is
 * sent, so that a reload or another page loses none of them.
 */
export function useReviewDrafts(sessionId: string) {
  const [state, setState] = useState(() => ({ sessionId, drafts: readDrafts(sessionId) }));
  let drafts = state.drafts;
  if (state.sessionId !== sessionId) {
    drafts = readDrafts(sessionId);
    setState({ sessionId, drafts });
  }
  const save = (next: DraftComment[]) => {
    writeDrafts(sessionId, next);
    setState({ sessionId, drafts: next });
  };
  return {
    drafts,
    add(comment: ReviewedComment): DraftComment {
      const draft = { ...comment, id: newId() };
      save([...readDrafts(sessionId), draft]);
      return draft;
    },
    edit(id: string, body: string) {
      save(readDrafts(sessionId).map((d) => (d.id === id ? { ...d, body } : d)));
    },
    remove(id: string) {
      save(readDrafts(sessionId).filter((d) => d.id !== id));
    },
    /** Drops the drafts a review sent (any written meanwhile stay). */
    sent(ids: readonly string[]) {
      save(readDrafts(sessionId).filter((d) => !ids.includes(d.id)));
    },
  };
}
export type ReviewDrafts = ReturnType<typeof useReviewDrafts>;
