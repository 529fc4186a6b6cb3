import { describe, expect, it } from 'vitest';
import type { ChangedFile } from '../../src-shared/changes.js';
import {
  commentedLines,
  placeComment,
  reviewCommentsIn,
  reviewPrompt,
  type ReviewedComment,
} from '../../src-shared/review.js';

/** A changed file of `git diff` with `hunks`, each its header and lines. */
function file(path: string, hunks: string[][], more: Partial<ChangedFile> = {}): ChangedFile {
  const patch = [
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    ...hunks.flat(),
    '',
  ].join('\n');
  return {
    path,
    status: 'modified',
    kind: 'file',
    binary: false,
    additions: 0,
    deletions: 0,
    truncated: false,
    patch,
    ...more,
  };
}

const APP = file('src/app.js', [
  [
    '@@ -1,4 +1,5 @@',
    ' const a = 1;',
    '-const b = 2;',
    '+const b = 3;',
    '+const c = 4;',
    ' const d = 5;',
    ' const e = 6;',
  ],
  ['@@ -20,2 +21,2 @@', ' function f() {', '-  return 1;', '+  return 2;'],
]);

const comment = (over: Partial<ReviewedComment>): ReviewedComment => ({
  path: 'src/app.js',
  line: 2,
  side: 'new',
  body: 'Why?',
  lines: ['+const b = 3;'],
  ...over,
});

describe('commentedLines', () => {
  it('gives the lines a comment names on its side, with their signs', () => {
    expect(commentedLines([APP], { path: 'src/app.js', line: 3, startLine: 1 })).toEqual({
      lines: [' const a = 1;', '+const b = 3;', '+const c = 4;'],
    });
    expect(commentedLines([APP], { path: 'src/app.js', line: 2, side: 'old' })).toEqual({
      lines: ['-const b = 2;'],
    });
    expect(commentedLines([APP], { path: 'src/app.js', line: 22 })).toEqual({ lines: ['+  return 2;'] });
  });

  it('says why a comment names no line', () => {
    expect(commentedLines([APP], { path: 'src/b.js', line: 1 })).toEqual({
      problem: "src/b.js is not a file of the session's changes",
    });
    expect(commentedLines([APP], { path: 'src/app.js', line: 10 })).toEqual({
      problem: 'line 10 of src/app.js is not in a hunk of its diff on the new side',
    });
    // Line 5 on the old side is past the first hunk (it has old lines 1 to 4).
    expect(commentedLines([APP], { path: 'src/app.js', line: 5, side: 'old' })).toEqual({
      problem: 'line 5 of src/app.js is not in a hunk of its diff on the old side (the base)',
    });
    expect(commentedLines([APP], { path: 'src/app.js', startLine: 5, line: 21 })).toEqual({
      problem: 'lines 5-21 of src/app.js are not in one hunk of its diff',
    });
    const cut = { ...APP, truncated: true };
    expect(commentedLines([cut], { path: 'src/app.js', line: 40 })).toEqual({
      problem:
        'line 40 of src/app.js is not in a hunk of its diff on the new side (its diff is cut: only the part shown has lines)',
    });
    const { patch: _, ...unshown } = APP;
    expect(commentedLines([unshown], { path: 'src/app.js', line: 1 })).toEqual({
      problem: 'src/app.js has no diff shown (the changes hold too many diffs), so no line of it',
    });
    const binary = file('logo.png', [], { binary: true });
    expect(commentedLines([binary], { path: 'logo.png', line: 1 })).toEqual({
      problem: 'logo.png has no lines in the sandbox in its diff',
    });
  });

  it('cuts a very long line where a review quotes it', () => {
    const long = file('min.js', [['@@ -0,0 +1 @@', `+${'x'.repeat(400)}`]], { status: 'added' });
    expect(commentedLines([long], { path: 'min.js', line: 1 })).toEqual({ lines: [`+${'x'.repeat(299)}…`] });
  });
});

describe('placeComment', () => {
  it('is open at its lines while they are in the diff as they were', () => {
    expect(placeComment([APP], comment({}))).toEqual({ resolved: false, startLine: 2, line: 2 });
    const range = comment({
      startLine: 1,
      line: 3,
      lines: [' const a = 1;', '+const b = 3;', '+const c = 4;'],
    });
    expect(placeComment([APP], range)).toEqual({ resolved: false, startLine: 1, line: 3 });
  });

  it('follows its lines when lines above them come or go, to the match nearest where it was made', () => {
    const moved = file('src/app.js', [
      ['@@ -1,3 +1,5 @@', '+// header', '+const b = 3;', ' const a = 1;', '-const b = 2;', '+const b = 3;'],
    ]);
    expect(placeComment([moved], comment({ line: 4 }))).toEqual({ resolved: false, startLine: 4, line: 4 });
    expect(placeComment([moved], comment({ line: 1 }))).toEqual({ resolved: false, startLine: 2, line: 2 });
  });

  it('is resolved once its lines changed or left the diff; shown where it was when that line is still there', () => {
    const changed = file('src/app.js', [
      ['@@ -1,3 +1,3 @@', ' const a = 1;', '-const b = 2;', '+const b = 30;', ' const d = 5;'],
    ]);
    expect(placeComment([changed], comment({}))).toEqual({ resolved: true, line: 2 });
    expect(placeComment([changed], comment({ line: 9 }))).toEqual({ resolved: true, line: null });
    expect(placeComment([], comment({}))).toEqual({ resolved: true, line: null });
    // A removed line put back is no longer removed: its comment is resolved.
    const restored = file('src/app.js', [['@@ -1,2 +1,2 @@', ' const a = 1;', ' const b = 2;']]);
    expect(placeComment([restored], comment({ side: 'old', lines: ['-const b = 2;'] }))).toEqual({
      resolved: true,
      line: 2,
    });
  });

  it('never matches across two hunks', () => {
    const lines = ['+const c = 4;', ' function f() {'];
    expect(placeComment([APP], comment({ startLine: 3, line: 4, lines }))).toEqual({
      resolved: true,
      line: 4,
    });
  });
});

describe('reviewPrompt', () => {
  const review = {
    comments: [
      comment({ body: 'Make this configurable.' }),
      comment({
        path: 'notes.md',
        startLine: 3,
        line: 4,
        lines: ['+one', ' two'],
        body: 'Shorter.\n\nMuch shorter.',
      }),
      comment({ line: 2, side: 'old', lines: ['-const b = 2;'], body: 'Keep it?' }),
    ],
    message: 'Then run the tests.',
  };

  it('quotes each commented line with its path and number, the words, then the message', () => {
    expect(reviewPrompt(review)).toBe(
      [
        'Review of your changes:',
        '',
        'src/app.js:2',
        '> const b = 3;',
        'Make this configurable.',
        '',
        'notes.md:3-4',
        '> one',
        '> two',
        'Shorter.',
        '',
        'Much shorter.',
        '',
        'src/app.js:2 (before your changes)',
        '> const b = 2;',
        'Keep it?',
        '',
        'Then run the tests.',
      ].join('\n'),
    );
    expect(reviewPrompt({ comments: review.comments.slice(0, 1) })).toBe(
      'Review of your changes:\n\nsrc/app.js:2\n> const b = 3;\nMake this configurable.',
    );
  });

  it('is read back by reviewCommentsIn: each place and the first line of its words', () => {
    expect(reviewCommentsIn(reviewPrompt(review))).toEqual([
      { path: 'src/app.js', startLine: 2, line: 2, side: 'new', words: 'Make this configurable.' },
      { path: 'notes.md', startLine: 3, line: 4, side: 'new', words: 'Shorter.' },
      { path: 'src/app.js', startLine: 2, line: 2, side: 'old', words: 'Keep it?' },
    ]);
    expect(reviewCommentsIn('Please look at src/app.js:2\n> x')).toEqual([]);
  });
});
