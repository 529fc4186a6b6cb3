import { z } from 'zod';
import type { ChangedFile } from './changes.js';
import { MESSAGE_MAX_CHARS } from './constants.js';
import { patchLines, type PatchLine } from './patch-lines.js';

/**
 * A review: comments on lines of a session's changes, sent to its agent as one follow-up
 * that quotes each commented line. The rules both sides need are here: which lines of a diff
 * a comment may name, the follow-up's text, and where a sent comment stands in a later diff.
 */

/** `new`: a line number in the sandbox's file (added and unchanged lines); `old`: on the base. */
export const REVIEW_SIDES = ['new', 'old'] as const;
export type ReviewSide = (typeof REVIEW_SIDES)[number];

export const REVIEW_LIMITS = {
  comments: 50,
  bodyChars: 4000,
  /** Lines one comment may span. */
  rangeLines: 50,
  /** A longer commented line is quoted up to here, with "…". */
  quotedLineChars: 300,
} as const;

const nonBlank = (s: string) => s.trim() !== '';

export const ReviewCommentSchema = z
  .strictObject({
    path: z.string().min(1).max(4096).describe('A file of the changes, as `files[].path` names it.'),
    line: z
      .number()
      .int()
      .min(1)
      .describe(
        'The line commented on (the last one of a range), numbered on `side` as the diff numbers it.',
      ),
    startLine: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        `The first line of a range (at most ${REVIEW_LIMITS.rangeLines} lines, in one hunk); absent for one line.`,
      ),
    side: z
      .enum(REVIEW_SIDES)
      .optional()
      .describe("`new` (default): numbered in the sandbox's file; `old`: on the base, for a removed line."),
    body: z.string().max(REVIEW_LIMITS.bodyChars).refine(nonBlank, 'must not be blank'),
  })
  .superRefine((comment, ctx) => {
    const start = comment.startLine ?? comment.line;
    if (start > comment.line) {
      ctx.addIssue({ code: 'custom', path: ['startLine'], message: 'must not be after line' });
    } else if (comment.line - start + 1 > REVIEW_LIMITS.rangeLines) {
      ctx.addIssue({
        code: 'custom',
        path: ['startLine'],
        message: `a comment spans at most ${REVIEW_LIMITS.rangeLines} lines`,
      });
    }
  });
export type ReviewComment = z.infer<typeof ReviewCommentSchema>;

export const ReviewBodySchema = z.strictObject({
  comments: z.array(ReviewCommentSchema).min(1).max(REVIEW_LIMITS.comments),
  message: z
    .string()
    .max(MESSAGE_MAX_CHARS)
    .optional()
    .describe("Words for the agent after the comments, as a follow-up's."),
});
export type ReviewBody = z.infer<typeof ReviewBodySchema>;

/** A comment as sent: where, the person's words, and the lines as the diff showed them then. */
export const ReviewedCommentSchema = z.object({
  path: z.string(),
  line: z.number().int(),
  startLine: z.number().int().optional(),
  side: z.enum(REVIEW_SIDES),
  body: z.string(),
  lines: z
    .array(z.string())
    .min(1)
    .max(REVIEW_LIMITS.rangeLines)
    .describe(
      `The commented lines when the review was sent, each as the diff showed it: its sign (\`+\`, \`-\` or a space) then its text, cut at ${REVIEW_LIMITS.quotedLineChars} characters.`,
    ),
});
export type ReviewedComment = z.infer<typeof ReviewedCommentSchema>;

/** What a review's user message carries beside its text (`review`). */
export const TranscriptReviewSchema = z.object({
  comments: z.array(ReviewedCommentSchema).min(1).max(REVIEW_LIMITS.comments),
  message: z.string().optional(),
});
export type TranscriptReview = z.infer<typeof TranscriptReviewSchema>;

export const SentReviewSchema = TranscriptReviewSchema.extend({
  index: z.number().int().describe("The review's message: its position in the conversation, from 0."),
  sentAt: z.iso.datetime({ precision: 3 }),
});
export type SentReview = z.infer<typeof SentReviewSchema>;

export const SessionReviewsResponseSchema = z.object({
  reviews: z.array(SentReviewSchema).describe('Oldest first.'),
});
export type SessionReviewsResponse = z.infer<typeof SessionReviewsResponseSchema>;

/** A line as a review quotes and remembers it: cut when very long. */
export function quotedLine(text: string): string {
  const max = REVIEW_LIMITS.quotedLineChars;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A line of a diff with its number on one side, and the hunk it is in. */
export interface SideLine {
  number: number;
  hunk: number;
  line: PatchLine;
}

/** The lines of a patch that have a number on `side`: added or unchanged (new), removed or unchanged (old). */
export function linesOnSide(patch: string, side: ReviewSide): SideLine[] {
  const out: SideLine[] = [];
  let hunk = -1;
  for (const line of patchLines(patch)) {
    if (line.kind === 'hunk') hunk += 1;
    const number = side === 'new' ? line.newLine : line.oldLine;
    if (number !== undefined) out.push({ number, hunk, line });
  }
  return out;
}

/**
 * The lines a comment names, each as a review remembers it, or why it names none: the path
 * must be a file of `files` with a diff, and its first and last lines in one hunk on its side.
 */
export function commentedLines(
  files: readonly ChangedFile[],
  comment: Pick<ReviewComment, 'path' | 'line' | 'startLine' | 'side'>,
): { lines: string[] } | { problem: string } {
  const { path, line } = comment;
  const side = comment.side ?? 'new';
  const start = comment.startLine ?? line;
  const file = files.find((f) => f.path === path);
  if (!file) return { problem: `${path} is not a file of the session's changes` };
  if (file.patch === undefined) {
    return { problem: `${path} has no diff shown (the changes hold too many diffs), so no line of it` };
  }
  const numbered = linesOnSide(file.patch, side);
  if (numbered.length === 0) {
    return {
      problem: `${path} has no ${side === 'new' ? 'lines in the sandbox' : 'lines on the base'} in its diff`,
    };
  }
  const where = side === 'new' ? 'on the new side' : 'on the old side (the base)';
  const first = numbered.findIndex((l) => l.number === start);
  const last = numbered.findIndex((l) => l.number === line);
  const cut = file.truncated ? ` (its diff is cut: only the part shown has lines)` : '';
  if (first < 0 || last < 0) {
    const missing = first < 0 ? start : line;
    return { problem: `line ${missing} of ${path} is not in a hunk of its diff ${where}${cut}` };
  }
  if (numbered[first]!.hunk !== numbered[last]!.hunk) {
    return { problem: `lines ${start}-${line} of ${path} are not in one hunk of its diff` };
  }
  return { lines: numbered.slice(first, last + 1).map((l) => quotedLine(l.line.text)) };
}

/** Where a sent comment stands in the changes as they are now. */
export type CommentPlace =
  /** Its lines are still in the diff, as they were: at these numbers now. */
  | { resolved: false; startLine: number; line: number }
  /** Its lines changed or left the diff; `line` is where it was made, when that line is in the diff. */
  | { resolved: true; line: number | null };

/**
 * A sent comment is open while the lines it quoted are in the file's diff as they were (same
 * text, same sign, one after another in a hunk): then it is shown at those lines, the nearest
 * match to where it was made. Once a later run changes them, or they leave the diff, it is
 * resolved.
 */
export function placeComment(files: readonly ChangedFile[], comment: ReviewedComment): CommentPlace {
  const file = files.find((f) => f.path === comment.path);
  if (!file?.patch) return { resolved: true, line: null };
  const numbered = linesOnSide(file.patch, comment.side);
  const texts = numbered.map((l) => quotedLine(l.line.text));
  const wanted = comment.lines;
  let best: { startLine: number; line: number } | null = null;
  for (let i = 0; i + wanted.length <= numbered.length; i += 1) {
    const hunk = numbered[i]!.hunk;
    if (!wanted.every((text, k) => texts[i + k] === text && numbered[i + k]!.hunk === hunk)) continue;
    const at = { startLine: numbered[i]!.number, line: numbered[i + wanted.length - 1]!.number };
    if (!best || Math.abs(at.line - comment.line) < Math.abs(best.line - comment.line)) best = at;
  }
  if (best) return { resolved: false, ...best };
  return { resolved: true, line: numbered.some((l) => l.number === comment.line) ? comment.line : null };
}

const REVIEW_HEADING = 'Review of your changes:';
const BEFORE = ' (before your changes)';

/** Where a comment is, as the follow-up names it: `path:12`, `path:12-14`, and the base marked. */
function placeText(comment: Pick<ReviewedComment, 'path' | 'line' | 'startLine' | 'side'>): string {
  const start = comment.startLine ?? comment.line;
  const lines = start === comment.line ? `${comment.line}` : `${start}-${comment.line}`;
  return `${comment.path}:${lines}${comment.side === 'old' ? BEFORE : ''}`;
}

/**
 * The follow-up a review sends, plain text any agent reads: each comment's place, the lines
 * it names quoted (`> `, without the diff's sign), the person's words; then the message.
 */
export function reviewPrompt(review: TranscriptReview): string {
  const parts = [REVIEW_HEADING];
  for (const comment of review.comments) {
    const quoted = comment.lines.map((l) => `> ${l.slice(1)}`);
    parts.push([placeText(comment), ...quoted, comment.body.trim()].join('\n'));
  }
  const message = review.message?.trim();
  if (message) parts.push(message);
  return parts.join('\n\n');
}

const PLACE = /^(.+):(\d+)(?:-(\d+))?( \(before your changes\))?$/u;

/**
 * The comments of a follow-up `reviewPrompt` wrote, read back from its text (for an agent that
 * has only the text, the demo's): each one's place and the first line of its words.
 */
export function reviewCommentsIn(
  prompt: string,
): Array<{ path: string; line: number; startLine: number; side: ReviewSide; words: string }> {
  const lines = prompt.split('\n');
  if (lines[0] !== REVIEW_HEADING) return [];
  const found: ReturnType<typeof reviewCommentsIn> = [];
  for (let i = 1; i < lines.length; i += 1) {
    const place = PLACE.exec(lines[i] ?? '');
    if (!place || lines[i - 1] !== '' || !lines[i + 1]?.startsWith('> ')) continue;
    let k = i + 1;
    while (lines[k]?.startsWith('> ')) k += 1;
    const startLine = Number(place[2]);
    found.push({
      path: place[1]!,
      startLine,
      line: place[3] === undefined ? startLine : Number(place[3]),
      side: place[4] === undefined ? 'new' : 'old',
      words: lines[k] ?? '',
    });
    i = k;
  }
  return found;
}
