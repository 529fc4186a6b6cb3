import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Text and sizes shared by the benchmarks that build transcripts shaped like real ones. */

const MB = 1024 * 1024;

/**
 * Text as real transcripts hold it: agents read and write source files and talk about them in
 * prose. The tool outputs here are slices of the real source files installed in node_modules
 * (JavaScript, TypeScript, JSON), and the prose slices of the Markdown there: a real code
 * base's vocabulary, not made-up words. The files are read in a fixed order, dot folders and
 * files left out, so a run on the same lockfile sees the same corpus.
 */
export class TextPool {
  private readonly code: string;
  private readonly prose: string;
  constructor(private readonly random: () => number) {
    const root = fileURLToPath(new URL('../node_modules', import.meta.url));
    const code: string[] = [];
    const prose: string[] = [];
    let codeBytes = 0;
    let proseBytes = 0;
    const walk = (dir: string) => {
      if (codeBytes >= 48 * MB && proseBytes >= 8 * MB) return;
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        const path = join(dir, entry.name);
        // Dot folders (`.cache`, `.vite`) hold what builds and tests leave, not a package's files:
        // read, they would change the corpus from one run to the next.
        if (entry.name.startsWith('.')) continue;
        if (entry.isDirectory()) walk(path);
        else if (
          /\.(?:js|ts|mjs|cjs|json)$/u.test(entry.name) &&
          !entry.name.endsWith('.min.js') &&
          codeBytes < 48 * MB
        ) {
          const text = readFileSync(path, 'utf8');
          if (text.length < 2 * MB) {
            code.push(text);
            codeBytes += text.length;
          }
        } else if (/\.md$/u.test(entry.name) && proseBytes < 8 * MB) {
          const text = readFileSync(path, 'utf8');
          prose.push(text);
          proseBytes += text.length;
        }
      }
    };
    walk(root);
    this.code = code.join('\n');
    this.prose = prose.join('\n');
  }
  private slice(from: string, chars: number): string {
    const start = Math.floor(this.random() * Math.max(1, from.length - chars));
    return from.slice(start, start + chars);
  }
  codeText(chars: number): string {
    return this.slice(this.code, chars);
  }
  proseText(chars: number): string {
    return this.slice(this.prose, chars);
  }
}

/** Session sizes as in bench/scale.ts: log-normal around 300 KB, capped at 8 MB, one of 2% 10 MB+. */
export function sessionSizes(totalBytes: number, random: () => number): number[] {
  const sizes: number[] = [];
  let sum = 0;
  while (sum < totalBytes) {
    const n = sizes.length;
    const size =
      n % 50 === 7
        ? 10 * MB * 10 ** (random() * 0.7)
        : Math.min(
            8 * MB,
            300 *
              1024 *
              Math.exp(1.2 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())),
          );
    const bounded = Math.max(4_000, Math.min(size, totalBytes - sum + 4_000));
    sizes.push(bounded);
    sum += bounded;
  }
  return sizes;
}
