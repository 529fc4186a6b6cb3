import { relative } from 'node:path';
import { SkippedEntry } from './safe-files.js';

// What a scan of a history source finds, apart from how each CLI lays its files out
// (session-files.ts), so that a CLI's own reader (opencode-store.ts) can name them too.

/**
 * One session file of a source: a sub-agent's file names its session's file. The small files
 * beside it are read only when the file itself is (`sideFile`): a scan reads nothing of a
 * folder whose files have not changed.
 */
export interface SessionFile {
  path: string;
  /** A Claude Code sub-agent file: its session's own file, and its meta file naming the call that started it. */
  parent?: { path: string; meta: string };
  /** The file where the CLI recorded the working folder (Gemini CLI's `.project_root`). */
  marker?: string;
  /** Gemini CLI's older chat file: one JSON document, rewritten whole (gemini-document.ts). */
  document?: boolean;
  /** An OpenCode session: a conversation in its database, not a file of its own (opencode-store.ts). */
  database?: { path: string; sessionId: string };
}

/** At most this many skipped entries are named in a report; the rest are counted. */
const SKIPS_NAMED = 20;

/** The entries of a source that were not read (links, pipes, unreadable files), for the report. */
export class Skips {
  readonly named: { path: string; reason: string }[] = [];
  count = 0;

  constructor(readonly rootDir: string) {}

  add(path: string, reason: string): void {
    this.count += 1;
    if (this.named.length < SKIPS_NAMED)
      this.named.push({ path: relative(this.rootDir, path) || path, reason });
  }

  /** Runs `read`; a SkippedEntry it throws is noted, and `fallback` given instead. */
  async guard<T>(read: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof SkippedEntry)) throw err;
      this.add(err.path, err.reason);
      return fallback;
    }
  }
}
