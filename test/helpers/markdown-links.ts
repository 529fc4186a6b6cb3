import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';

/** What a link check found wrong: where the link is, and why it leads nowhere. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  problem: string;
}

export interface LinkCheck {
  linksChecked: number;
  broken: BrokenLink[];
}

/** Folders that hold no documentation of ours: installs, builds, reports, generated data. */
const SKIPPED_FOLDERS = new Set([
  '.git',
  'node_modules',
  'out',
  'dist',
  'coverage',
  'test-results',
  'playwright-report',
]);

/**
 * The project's Markdown files, relative to `root`. Under test/fixtures only READMEs count:
 * the rest there is recorded input, not documentation.
 */
export function markdownFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(root, path).split(sep).join('/');
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name) && rel !== 'bench/data') walk(path);
      } else if (entry.isFile() && entry.name.endsWith('.md')) {
        if (!rel.startsWith('test/fixtures/') || entry.name === 'README.md') found.push(rel);
      }
    }
  };
  walk(root);
  return found.sort();
}

interface ProseLine {
  number: number;
  text: string;
}

/** The lines that are not inside a fenced code block, with their 1-based numbers. */
function proseLines(markdown: string): ProseLine[] {
  const lines: ProseLine[] = [];
  // A fence closes on a line of the same character, at least as long, and nothing else.
  let closer: RegExp | null = null;
  markdown.split('\n').forEach((text, index) => {
    if (closer !== null) {
      if (closer.test(text)) closer = null;
      return;
    }
    const opener = /^ {0,3}(`{3,}|~{3,})/u.exec(text)?.[1];
    if (opener) closer = new RegExp(`^ {0,3}${opener[0] === '`' ? '`' : '~'}{${opener.length},}\\s*$`, 'u');
    else lines.push({ number: index + 1, text });
  });
  return lines;
}

/** Inline code is shown as it is written: nothing in it is a link or emphasis. */
function splitCode(text: string): { code: boolean; text: string }[] {
  return text.split(/(`+[^`]*`+)/u).map((part) => {
    const span = /^(`+)([^`]*)\1$/u.exec(part);
    return span ? { code: true, text: span[2]!.trim() } : { code: false, text: part };
  });
}

/** A heading's text as GitHub renders it: no code ticks, emphasis, link targets or tags. */
function renderedText(heading: string): string {
  return splitCode(heading)
    .map(({ code, text }) =>
      code
        ? text
        : text
            .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, '$1')
            .replace(/<[^>]+>/gu, '')
            .replace(/\*+/gu, '')
            .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'),
    )
    .join('');
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return renderedText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /gu, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (a repeated one gets -1, -2, …) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const add = (slug: string): void => {
    let candidate = slug;
    for (let n = 1; anchors.has(candidate); n += 1) candidate = `${slug}-${n}`;
    anchors.add(candidate);
  };
  const lines = proseLines(markdown);
  lines.forEach(({ number, text }, index) => {
    const atx = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/u.exec(text);
    const previous = lines[index - 1];
    const setext =
      /^ {0,3}(=+|-+)\s*$/u.test(text) &&
      previous !== undefined &&
      previous.number === number - 1 &&
      previous.text.trim() !== '' &&
      !/^ {0,3}(#|[-*+]\s|\d+[.)]\s|\||>)/u.test(previous.text);
    if (atx) add(githubSlug(atx[1]!));
    else if (setext) add(githubSlug(previous.text.trim()));
    for (const id of text.matchAll(/<a\s[^>]*(?:name|id)="([^"]+)"/gu)) anchors.add(id[1]!);
  });
  return anchors;
}

/** The link targets of a Markdown file outside code, with their lines: inline links, images and definitions. */
export function linkTargets(markdown: string): { line: number; target: string }[] {
  const targets: { line: number; target: string }[] = [];
  for (const { number, text } of proseLines(markdown)) {
    const prose = splitCode(text)
      .map((part) => (part.code ? '' : part.text))
      .join('');
    for (const link of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)/gu)) {
      targets.push({ line: number, target: link[1]!.replace(/^<|>$/gu, '') });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/u.exec(prose);
    if (definition) targets.push({ line: number, target: definition[1]!.replace(/^<|>$/gu, '') });
  }
  return targets;
}

/**
 * Checks that every relative link of `files` (relative to `root`) leads somewhere: the file or
 * folder exists, and a `#anchor` into a Markdown file names one of its headings.
 */
export function checkLinks(root: string, files: string[]): LinkCheck {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  let linksChecked = 0;
  for (const file of files) {
    const source = join(root, file);
    for (const { line, target } of linkTargets(readFileSync(source, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/iu.test(target) || target.startsWith('//')) continue;
      linksChecked += 1;
      const hashAt = target.indexOf('#');
      const pathPart = decodeURIComponent(hashAt === -1 ? target : target.slice(0, hashAt));
      const anchor = hashAt === -1 ? null : decodeURIComponent(target.slice(hashAt + 1));
      const resolved =
        pathPart === ''
          ? source
          : pathPart.startsWith('/')
            ? join(root, pathPart)
            : resolve(dirname(source), pathPart);
      const report = (problem: string): void => {
        broken.push({ file, line, target, problem });
      };
      if (!existsSync(resolved)) {
        report(`${relative(root, resolved) || '.'} does not exist`);
      } else if (anchor !== null && statSync(resolved).isFile() && extname(resolved) === '.md') {
        if (!anchorsIn(resolved).has(anchor)) {
          report(`${relative(root, resolved)} has no heading with the anchor #${anchor}`);
        }
      }
    }
  }
  return { linksChecked, broken };
}
