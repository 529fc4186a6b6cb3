import {
  commentedLines,
  reviewPrompt,
  type ReviewBody,
  type SentReview,
  type TranscriptReview,
} from '../../src-shared/review.js';
import { MESSAGE_MAX_CHARS } from '../../src-shared/constants.js';
import { UserMessageSchema } from '../../src-shared/sessions.js';
import type { SessionChanges } from '../changes/session-changes.js';
import { badRequest, notFound } from '../errors.js';
import type { SessionRow } from '../store/session-row.js';
import { sendFollowUp, type FollowUpDeps } from './follow-up.js';
import { readMessagePage, type TranscriptReads } from './transcript-reads.js';

/**
 * The review a body asks for, each comment with the lines it names in the session's changes
 * as they are now; 400 naming the first comment that names no line of them.
 */
async function checkedReview(
  changes: SessionChanges,
  sessionId: string,
  body: ReviewBody,
): Promise<TranscriptReview> {
  const now = await changes.of(sessionId);
  if (!now) throw notFound('Session not found');
  if (!now.available) {
    throw badRequest(`There are no changes to comment on: ${now.message}`, [
      { path: 'body.comments.0', message: 'names no line of the changes: there are none to show' },
    ]);
  }
  const comments = body.comments.map((comment, i) => {
    const found = commentedLines(now.files, comment);
    if ('problem' in found) {
      throw badRequest(`Comment ${i + 1} names no line of the session's changes: ${found.problem}.`, [
        { path: `body.comments.${i}`, message: found.problem },
      ]);
    }
    return {
      path: comment.path,
      line: comment.line,
      ...(comment.startLine !== undefined && comment.startLine !== comment.line
        ? { startLine: comment.startLine }
        : {}),
      side: comment.side ?? 'new',
      body: comment.body.trim(),
      lines: found.lines,
    };
  });
  const message = body.message?.trim();
  return { comments, ...(message ? { message } : {}) };
}

/**
 * A person's review of the session's changes: checked against the changes as they are now,
 * then sent as one follow-up quoting each commented line (follow-up.ts), its comments kept
 * beside the text. An imported session's changes are those of its sandbox, so it goes on there.
 */
export async function sendReview(
  deps: FollowUpDeps & { changes: SessionChanges },
  session: SessionRow,
  body: ReviewBody,
  authorId: string,
): Promise<SessionRow> {
  const review = await checkedReview(deps.changes, session.id, body);
  const content = reviewPrompt(review);
  if (content.length > MESSAGE_MAX_CHARS) {
    throw badRequest(
      `The review comes to ${content.length.toLocaleString('en-US')} characters with the lines it quotes; a follow-up holds at most ${MESSAGE_MAX_CHARS.toLocaleString('en-US')}: send fewer or shorter comments.`,
      [{ path: 'body.comments', message: 'quote too much for one follow-up' }],
    );
  }
  return sendFollowUp(
    deps,
    session,
    { content, ...(session.source ? { continueIn: 'sandbox' as const } : {}) },
    authorId,
    review,
  );
}

/**
 * The reviews sent in a session, oldest first: read from the messages people wrote (the
 * `prompts` the database lists), one at a time, never the whole transcript.
 */
export async function sentReviews(reads: TranscriptReads, row: SessionRow): Promise<SentReview[]> {
  const authored = await reads.storage.repos.sessions.promptAuthors(row.id);
  const positions = [...authored.keys()].filter((seq) => seq <= row.messageCount).sort((a, b) => a - b);
  const reviews: SentReview[] = [];
  for (const seq of positions) {
    const page = await readMessagePage(reads, row, seq - 1, 1, Infinity);
    const bytes = page.messages[0];
    if (!bytes?.includes('"review"')) continue;
    const parsed = UserMessageSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    if (!parsed.success || !parsed.data.review) continue;
    reviews.push({
      ...parsed.data.review,
      index: seq - 1,
      sentAt: new Date(page.createdAtMs[0] ?? 0).toISOString(),
    });
  }
  return reviews;
}
