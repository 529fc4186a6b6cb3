import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makePreview, makeTitle } from '../../src-shared/text.js';
import { parseRepoUrl } from '../../src-shared/repo-url.js';

describe('makeTitle', () => {
  it('takes the first sentence, without its final punctuation', () => {
    expect(makeTitle('Fix the flaky login test. It fails on CI.')).toBe('Fix the flaky login test');
    expect(makeTitle('Why is the build red? Look at it')).toBe('Why is the build red');
  });

  it('takes the first line when it comes before any sentence end', () => {
    expect(makeTitle('Refactor the parser\nthen add tests.')).toBe('Refactor the parser');
  });

  it('does not end a sentence inside a version number', () => {
    expect(makeTitle('Upgrade to v1.2 of the parser')).toBe('Upgrade to v1.2 of the parser');
  });

  it('collapses whitespace', () => {
    expect(makeTitle('  Add   a\tcache  ')).toBe('Add a cache');
  });

  it('cuts at 80 characters on a word boundary', () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const title = makeTitle(words);
    expect(title.length).toBeLessThanOrEqual(80);
    expect(words.startsWith(title)).toBe(true);
    expect(words.charAt(title.length)).toBe(' ');
  });

  it('cuts one very long word at 80 characters', () => {
    expect(makeTitle('x'.repeat(500))).toBe('x'.repeat(80));
  });

  it('counts characters, not UTF-16 units, and never splits an emoji', () => {
    const title = makeTitle('🚀'.repeat(100));
    expect(Array.from(title)).toHaveLength(80);
    expect(title).toBe('🚀'.repeat(80));
    expect(makeTitle('Réparer le café 👩‍💻 déjà')).toBe('Réparer le café 👩‍💻 déjà');
  });

  it('falls back to "Untitled session" when nothing is left', () => {
    expect(makeTitle(undefined)).toBe('Untitled session');
    expect(makeTitle('   ')).toBe('Untitled session');
    expect(makeTitle('?!...')).toBe('Untitled session');
  });
});

describe('makePreview', () => {
  it('keeps short text whole, whitespace collapsed', () => {
    expect(makePreview('  hello\n\n  world ')).toBe('hello world');
  });

  it('cuts at 120 characters on a word boundary and appends "..."', () => {
    const text = Array.from({ length: 40 }, () => 'abcdefg').join(' ');
    const preview = makePreview(text);
    expect(preview.endsWith('...')).toBe(true);
    const kept = preview.slice(0, -3);
    expect(kept.length).toBeLessThanOrEqual(120);
    expect(text.startsWith(kept)).toBe(true);
    expect(text.charAt(kept.length)).toBe(' ');
  });

  it('does not append "..." at exactly 120 characters', () => {
    expect(makePreview('a'.repeat(120))).toBe('a'.repeat(120));
    expect(makePreview('a'.repeat(121))).toBe(`${'a'.repeat(120)}...`);
  });

  it('cuts inside a word only when there is no space to cut at', () => {
    expect(makePreview(`${'x'.repeat(200)} tail`)).toBe(`${'x'.repeat(120)}...`);
  });

  it('never splits a grapheme', () => {
    const preview = makePreview('é'.repeat(200));
    expect(preview).toBe(`${'é'.repeat(120)}...`);
  });
});

describe('parseRepoUrl', () => {
  it('accepts https://<host>/<owner>/<repo> and drops .git or a trailing slash', () => {
    expect(parseRepoUrl('https://github.com/acme/web')).toEqual({
      url: 'https://github.com/acme/web',
      repository: 'acme/web',
    });
    expect(parseRepoUrl('https://github.com/acme/web.git')?.repository).toBe('acme/web');
    expect(parseRepoUrl('https://git.example.com:8443/acme/web/')?.url).toBe(
      'https://git.example.com:8443/acme/web',
    );
  });

  it.each([
    'http://github.com/acme/web',
    'git@github.com:acme/web.git',
    'https://github.com/acme',
    'https://github.com/acme/web/tree/main',
    'https://user:pw@github.com/acme/web',
    'https://github.com/acme/web?x=1',
    'https://github.com/../web',
    'https://github.com/acme/.git',
    'https:///acme/web',
    '',
  ])('refuses %s', (url) => {
    expect(parseRepoUrl(url)).toBeNull();
  });
});

describe('makePreview of long messages', () => {
  /** The rule as written, on the whole text: what the fast paths must agree with. */
  function reference(text: string): string {
    const collapsed = text.replace(/\s+/gu, ' ').trim();
    const chars = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(collapsed)].map(
      (s) => s.segment,
    );
    if (chars.length <= 120) return collapsed;
    if (chars[120] === ' ') return `${chars.slice(0, 120).join('')}...`;
    const head = chars.slice(0, 120);
    const lastSpace = head.lastIndexOf(' ');
    return `${(lastSpace > 0 ? head.slice(0, lastSpace) : head).join('').trimEnd()}...`;
  }

  it('agrees with the rule applied to the whole text, for text of any size and script', () => {
    const pieces = [
      'word',
      ' ',
      '  \n\t ',
      'é',
      'e\u0301',
      '👩‍👩‍👧',
      '漢字',
      'x'.repeat(50),
      ' '.repeat(3000),
      '\r\n',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 400 }), fc.nat(5000), (parts, pad) => {
        const text = ' '.repeat(pad % 7 === 0 ? pad : 0) + parts.join('');
        expect(makePreview(text)).toBe(reference(text));
      }),
      { numRuns: 400 },
    );
  });

  it('reads only the start of a message of megabytes', () => {
    const text = `${'Reading the file. '.repeat(10)}${'data '.repeat(2_000_000)}`;
    expect(makePreview(text)).toBe(reference(text.slice(0, 2000)));
  });
});
