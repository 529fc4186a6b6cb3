import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiffOutputParser, type DiffCaps } from '../../src-main/changes/diff-output.js';
import { tempDir } from '../helpers/server.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], { cwd });

/** Real output of the diff the changes route runs, over a repository with every kind of change. */
function realDiffOutput(dir: string): Buffer {
  git(dir, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(dir, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(dir, 'move me.txt'), Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n'));
  writeFileSync(join(dir, 'gone.txt'), 'bye\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'base');
  writeFileSync(join(dir, 'a.txt'), 'one\n2\nthree\nfour\n');
  git(dir, 'mv', 'move me.txt', 'moved\ttab.txt');
  git(dir, 'rm', '--quiet', 'gone.txt');
  mkdirSync(join(dir, 'new'));
  writeFileSync(join(dir, 'new', 'bin.dat'), Buffer.from([0, 1, 2, 0]));
  writeFileSync(join(dir, 'new', 'diff --git fake.txt'), 'diff --git a/x b/x\n');
  git(dir, 'add', '.');
  const args = ['diff', '--raw', '--numstat', '--patch', '-z', '--find-renames', '--cached', 'HEAD'];
  return execFileSync('git', args, { cwd: dir });
}

const parse = (output: Buffer, chunkSize: number, caps: DiffCaps) => {
  let stopped = false;
  const parser = new DiffOutputParser(caps, () => (stopped = true));
  for (let at = 0; at < output.length && !stopped; at += chunkSize) {
    parser.push(output.subarray(at, at + chunkSize));
  }
  return { ...parser.finish(), stopped };
};

describe('DiffOutputParser', () => {
  const dir = tempDir('sessiondesk-diff-output-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const output = realDiffOutput(dir);
  const roomy: DiffCaps = { files: 100, filePatchBytes: 1 << 20, totalPatchBytes: 1 << 20 };

  it('reads statuses, paths, counts and one patch per file', () => {
    const parsed = parse(output, output.length, roomy);
    expect(
      parsed.files.map(({ patch, ...rest }) => ({ ...rest, patchStart: patch?.split('\n')[0] })),
    ).toEqual([
      {
        path: 'a.txt',
        status: 'modified',
        kind: 'file',
        binary: false,
        additions: 2,
        deletions: 1,
        truncated: false,
        patchStart: 'diff --git a/a.txt b/a.txt',
      },
      {
        path: 'gone.txt',
        status: 'deleted',
        kind: 'file',
        binary: false,
        additions: 0,
        deletions: 1,
        truncated: false,
        patchStart: 'diff --git a/gone.txt b/gone.txt',
      },
      {
        path: 'moved\ttab.txt',
        oldPath: 'move me.txt',
        status: 'renamed',
        kind: 'file',
        binary: false,
        additions: 0,
        deletions: 0,
        truncated: false,
        patchStart: 'diff --git a/move me.txt "b/moved\\ttab.txt"',
      },
      {
        path: 'new/bin.dat',
        status: 'added',
        kind: 'file',
        binary: true,
        additions: 0,
        deletions: 0,
        truncated: false,
        patchStart: 'diff --git a/new/bin.dat b/new/bin.dat',
      },
      {
        path: 'new/diff --git fake.txt',
        status: 'added',
        kind: 'file',
        binary: false,
        additions: 1,
        deletions: 0,
        truncated: false,
        patchStart: 'diff --git a/new/diff --git fake.txt b/new/diff --git fake.txt',
      },
    ]);
    expect(parsed.files[4]?.patch).toContain('\n+diff --git a/x b/x\n');
    expect(parsed.totals).toEqual({ files: 5, additions: 3, deletions: 2 });
    expect(parsed.truncated).toBe(false);
  });

  it('reads the same whatever the chunks git writes in', () => {
    const whole = parse(output, output.length, roomy);
    for (let size = 1; size <= 64; size += 1)
      expect(parse(output, size, roomy), `chunks of ${size}`).toEqual(whole);
  });

  it('cuts patches at a line end under the caps, keeps exact counts, and stops git once spent', () => {
    const whole = parse(output, output.length, roomy);
    const firstPatch = whole.files[0]?.patch ?? '';
    const capped = parse(output, 7, {
      files: 100,
      filePatchBytes: firstPatch.length - 1,
      totalPatchBytes: firstPatch.length + 10,
    });
    expect(capped.files[0]?.truncated).toBe(true);
    expect(firstPatch.startsWith(capped.files[0]?.patch ?? 'x')).toBe(true);
    expect(capped.files[0]?.patch).toMatch(/\n$/u);
    expect(capped.files.slice(2).every((f) => f.patch === undefined && f.truncated)).toBe(true);
    expect(capped.stopped).toBe(true);
    expect(capped.totals).toEqual(whole.totals);
    expect(capped.truncated).toBe(true);

    const fewer = parse(output, 13, { ...roomy, files: 2 });
    expect(fewer.files.map((f) => f.path)).toEqual(['a.txt', 'gone.txt']);
    expect(fewer.totals).toEqual(whole.totals);
    expect(fewer.truncated).toBe(true);
  });
});
