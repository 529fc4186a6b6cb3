import { describe, expect, it } from 'vitest';
import { patchLines } from '../../src-shared/patch-lines';
import { byteSize } from '../../src-renderer/src/features/changes/byte-size';

describe('patchLines', () => {
  it('numbers lines from the hunk headers and tells header lines from removed and added ones', () => {
    const patch = [
      'diff --git a/notes.md b/notes.md',
      'index 1111111..2222222 100644',
      '--- a/notes.md',
      '+++ b/notes.md',
      '@@ -3,3 +3,3 @@ heading',
      ' same',
      '--- a removed line that looks like a header',
      '+++ an added line that looks like one',
      '',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    expect(patchLines(patch)).toEqual([
      { kind: 'hunk', text: '@@ -3,3 +3,3 @@ heading' },
      { kind: 'context', text: ' same', oldLine: 3, newLine: 3 },
      { kind: 'del', text: '--- a removed line that looks like a header', oldLine: 4 },
      { kind: 'add', text: '+++ an added line that looks like one', newLine: 4 },
      { kind: 'context', text: '', oldLine: 5, newLine: 5 },
      { kind: 'note', text: '\\ No newline at end of file' },
    ]);
  });

  it('keeps the header lines that say more than the path: renames, modes, binary files', () => {
    const rename = 'diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n';
    expect(patchLines(rename).map((l) => l.text)).toEqual([
      'similarity index 100%',
      'rename from a.txt',
      'rename to b.txt',
    ]);
    const binary = 'diff --git a/x.bin b/x.bin\nindex 1..2 100644\nBinary files a/x.bin and b/x.bin differ\n';
    expect(patchLines(binary)).toEqual([{ kind: 'meta', text: 'Binary files a/x.bin and b/x.bin differ' }]);
  });

  it('states the caps in KiB and MiB', () => {
    expect([byteSize(256 * 1024), byteSize(2 * 1024 * 1024)]).toEqual(['256 KiB', '2 MiB']);
  });
});
