import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { anchorsOf, checkLinks, githubSlug, markdownFiles } from '../helpers/markdown-links.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

describe('the manual', () => {
  it('has no relative link to a missing file or heading, in README.md, docs/ or any README', () => {
    const files = markdownFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/guides/README.md',
        'docs/reference/README.md',
        'bench/README.md',
      ]),
    );

    const { linksChecked, broken } = checkLinks(ROOT, files);

    expect(broken).toEqual([]);
    // The README's map alone links every page: a check that found no links proved nothing.
    expect(linksChecked).toBeGreaterThan(100);
  });
});

describe('anchors, as GitHub makes them', () => {
  it('are the heading in lower case, punctuation dropped, spaces as hyphens', () => {
    expect(githubSlug('Search transcripts: `GET /api/search` (additive)')).toBe(
      'search-transcripts-get-apisearch-additive',
    );
    expect(githubSlug("The desktop app's tests")).toBe('the-desktop-apps-tests');
    expect(githubSlug('Stopping `serve`')).toBe('stopping-serve');
    expect(githubSlug('Where agents run, and what they see')).toBe('where-agents-run-and-what-they-see');
    expect(githubSlug('The _demo_ and **bold** and [a link](x.md)')).toBe('the-demo-and-bold-and-a-link');
    expect(githubSlug('`snake_case` stays')).toBe('snake_case-stays');
    expect(githubSlug('Café — naïve')).toBe('café--naïve');
  });

  it('number a repeated heading, and ignore headings in code blocks', () => {
    const anchors = anchorsOf(
      [
        '# Runs',
        '## Runs',
        '```sh',
        '# Runs (a shell comment)',
        '```',
        'Runs',
        '----',
        '<a id="kept-by-hand"></a>',
      ].join('\n'),
    );

    expect([...anchors]).toEqual(['runs', 'runs-1', 'runs-2', 'kept-by-hand']);
  });
});

describe('the link check', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('reports a missing file and a missing heading, with the line, and nothing in code', () => {
    dir = mkdtempSync(join(tmpdir(), 'docs-links-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'page.md'), '# A page\n\n## Its part\n');
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Home',
        '[fine](docs/page.md#its-part) and [here](#home) and [a site](https://example.com/x.md)',
        '[gone](docs/missing.md)',
        'See [the part](docs/page.md#no-such-part).',
        '`[in code](docs/missing.md)`',
        '```md',
        '[in a block](docs/missing.md)',
        '```',
        '[ref]: docs/page.md#its-part',
        '[bad ref]: ./nowhere/',
      ].join('\n'),
    );

    const { linksChecked, broken } = checkLinks(dir, ['README.md', 'docs/page.md']);

    expect(linksChecked).toBe(6);
    expect(broken).toEqual([
      { file: 'README.md', line: 3, target: 'docs/missing.md', problem: 'docs/missing.md does not exist' },
      {
        file: 'README.md',
        line: 4,
        target: 'docs/page.md#no-such-part',
        problem: 'docs/page.md has no heading with the anchor #no-such-part',
      },
      { file: 'README.md', line: 10, target: './nowhere/', problem: 'nowhere does not exist' },
    ]);
  });
});
